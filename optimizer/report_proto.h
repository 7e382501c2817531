// The optimizer's report as the wire message (proto/optimizer.proto), shared
// by the gRPC service and `taso optimize --json`, so both print the same.
#ifndef TASO_OPTIMIZER_REPORT_PROTO_H_
#define TASO_OPTIMIZER_REPORT_PROTO_H_

#include "optimizer/optimize.h"
#include "proto/optimizer.pb.h"

namespace taso::optimizer {

Report ReportToProto(const OptimizeReport& report);

// Where a report's rules came from, as rule_source.h's DescribeRules takes it.
RuleProvenance RuleProvenanceFromReport(const Report& report);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_REPORT_PROTO_H_
