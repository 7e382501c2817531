// Validates rendered Kubernetes manifests (the output of `kubectl kustomize`)
// against the Kubernetes OpenAPI schemas, then checks the invariants the
// cluster relies on that a schema cannot see (store ordinal = store index,
// generation as an Indexed Job with per-index retries, grace periods that
// cover the longest search, gRPC probes on every server) and the policies an
// operator expects: the "restricted" Pod Security Standard on every pod, a
// start-up probe on every server, a PodDisruptionBudget for the store and the
// optimizer, the recommended app.kubernetes.io labels, store shards spread
// over nodes.
//
//   node validate.mjs RENDERED.yaml [--expect-gpu] [--expect-tls] [--expect-monitoring] [--schema-only]
//   node validate.mjs RENDERED.yaml --list-flags   # "BINARY FLAG" per flag a container passes
//   node validate.mjs RENDERED.yaml --list-metrics # each metric an alert rule reads
//   --expect-tls: every server has TLS (its own certificate) and tokens, every
//     client a CA and a token, and nothing runs --insecure
//   --expect-monitoring: a PodMonitor scrapes the metrics ports, and alert rules exist
//   --expect-certificates: cert-manager issues every TLS Secret a pod mounts
// Prometheus Operator's PodMonitor and PrometheusRule and cert-manager's
// Issuer and Certificate have no schema here
// (kubernetes-models holds the core API only): their structure is checked
// by hand below.
//
// Prints one line per object and a closing line; exits 1 on any error, so a
// test can assert both a good render and a rejected bad one.
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";

const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith("--"));
const expectGpu = args.includes("--expect-gpu");
const schemaOnly = args.includes("--schema-only");
const listFlags = args.includes("--list-flags");
const expectTls = args.includes("--expect-tls");
const expectMonitoring = args.includes("--expect-monitoring");
const expectCertificates = args.includes("--expect-certificates");
const listMetrics = args.includes("--list-metrics");
if (!file) {
  console.error("usage: node validate.mjs RENDERED.yaml [--expect-gpu] [--schema-only]");
  process.exit(2);
}

// apiVersion -> the kubernetes-models module folder that holds its kinds.
function modulePath(apiVersion, kind) {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
  return group === "" ? `kubernetes-models/${version}/${kind}` : `kubernetes-models/${group}/${version}/${kind}`;
}

// Custom resources the components use, checked by hand (no schema here).
const CUSTOM_KINDS = {
  "monitoring.coreos.com/v1": ["PodMonitor", "PrometheusRule"],
  "cert-manager.io/v1": ["Issuer", "Certificate"],
};

// The fields Prometheus Operator and cert-manager need, or what is wrong.
function checkCustomShape(o) {
  if (!o.metadata?.name) return "no metadata.name";
  if (o.kind === "Issuer") {
    const kinds = ["selfSigned", "ca", "acme", "vault"].filter((k) => o.spec?.[k] !== undefined);
    if (kinds.length !== 1) return "an Issuer needs exactly one of selfSigned, ca, acme or vault";
    if (o.spec.ca && !o.spec.ca.secretName) return "a ca Issuer needs its secretName";
    return null;
  }
  if (o.kind === "Certificate") {
    if (!o.spec?.secretName) return "a Certificate needs spec.secretName";
    if (!o.spec.issuerRef?.name) return "a Certificate needs spec.issuerRef.name";
    if (!o.spec.isCA && !(o.spec.dnsNames ?? []).length && !(o.spec.ipAddresses ?? []).length) {
      return "a server Certificate names no dnsNames or ipAddresses";
    }
    return null;
  }
  if (o.kind === "PodMonitor") {
    if (!o.spec?.selector?.matchLabels) return "spec.selector.matchLabels is missing";
    const endpoints = o.spec.podMetricsEndpoints ?? [];
    if (endpoints.length === 0) return "no podMetricsEndpoints";
    if (endpoints.some((e) => typeof e.port !== "string")) return "each podMetricsEndpoint needs a port name";
    return null;
  }
  const groups = o.spec?.groups ?? [];
  if (groups.length === 0) return "no rule groups";
  for (const g of groups) {
    if (!g.name) return "a rule group without a name";
    for (const r of g.rules ?? []) {
      if (!r.alert && !r.record) return `group ${g.name}: a rule that neither alerts nor records`;
      if (typeof r.expr !== "string" || r.expr === "") return `group ${g.name}: rule ${r.alert ?? r.record} has no expr`;
      if (r.for && !/^\d+[smhd]$/.test(r.for)) return `rule ${r.alert}: for: ${r.for} is no duration`;
    }
  }
  return null;
}

const errors = [];
const objects = [];
const docs = parseAllDocuments(readFileSync(file, "utf8"));
for (const doc of docs) {
  if (doc.errors.length) {
    errors.push(`YAML: ${doc.errors[0].message}`);
    continue;
  }
  const obj = doc.toJS();
  if (obj == null) continue;
  const name = `${obj.kind}/${obj.metadata?.name}`;
  if ((CUSTOM_KINDS[obj.apiVersion] ?? []).includes(obj.kind)) {
    const problem = checkCustomShape(obj);
    if (problem) errors.push(`${name}: ${problem}`);
    else {
      if (!listFlags && !listMetrics) console.log(`valid ${name}`);
      objects.push(obj);
    }
    continue;
  }
  let Model;
  try {
    Model = (await import(modulePath(obj.apiVersion, obj.kind)))[obj.kind];
  } catch {
    errors.push(`${name}: unknown apiVersion/kind ${obj.apiVersion} ${obj.kind}`);
    continue;
  }
  try {
    new Model(obj).validate();
    if (!listFlags && !listMetrics) console.log(`valid ${name}`);
    objects.push(obj);
  } catch (e) {
    errors.push(`${name}: ${e.message}`);
  }
}
if (objects.length === 0 && errors.length === 0) errors.push("no objects in the rendered manifests");

// Every flag a container passes to one of our binaries, so the test can
// check each against the binary's --helpfull (a renamed flag fails there,
// not in a cluster). Shell commands are scanned for `BINARY ... --flag`.
// A taso command's words come with the binary, "+"-joined ("taso+job+create
// store"): the CLI lists a command's flags under `taso COMMAND --help`.
if (listFlags) {
  const ours = /^(taso|taso_rules_db|taso_generator|taso_verifier|taso_profiler|taso_optimizer)$/;
  const seen = new Set();
  for (const o of objects.filter((x) => x.spec?.template?.spec)) {
    for (const c of [...(o.spec.template.spec.initContainers ?? []), ...o.spec.template.spec.containers]) {
      const words = [...(c.command ?? []), ...(c.args ?? [])];
      const scripts = words[0] === "sh" ? [words.slice(2).join(" ")] : [words.join(" ")];
      for (const script of scripts) {
        let binary = null;
        let command = [];
        let inCommand = false;
        for (const word of script.split(/\s+/)) {
          if (ours.test(word)) {
            binary = word;
            command = [];
            inCommand = word === "taso";
            continue;
          }
          if (inCommand && /^[a-z]+$/.test(word)) {
            command.push(word);
            continue;
          }
          inCommand = false;
          const m = /^--([a-z_-]+)/.exec(word);
          if (binary && m) seen.add(`${[binary, ...command].join("+")} ${m[1]}`);
        }
      }
    }
  }
  for (const line of [...seen].sort()) console.log(line);
  process.exit(errors.length ? 1 : 0);
}

// Each metric an alert or recording rule reads (identifiers before a "{",
// "[" or a space that name a series), so the test can check each against
// what the binaries export.
if (listMetrics) {
  const seen = new Set();
  const functions = new Set(["sum", "rate", "delta", "by", "and", "or", "unless", "on", "max", "min", "avg",
    "histogram_quantile", "increase", "deriv", "count", "without", "ignoring", "group_left", "group_right"]);
  for (const o of objects.filter((x) => x.kind === "PrometheusRule")) {
    for (const g of o.spec.groups) {
      for (const r of g.rules) {
        const stripped = r.expr.replace(/\{[^}]*\}/g, "{}").replace(/\[[^\]]*\]/g, "[]").replace(/\([^()]*\)\s/g, " ");
        for (const m of stripped.matchAll(/\b([a-z_][a-z0-9_]*)\b(?!\s*\()/g)) {
          if (!functions.has(m[1]) && !/^(by|and|or)$/.test(m[1]) && !/^\d/.test(m[1])) seen.add(m[1]);
        }
      }
    }
  }
  for (const name of [...seen].sort()) console.log(name);
  process.exit(errors.length ? 1 : 0);
}

// --- invariants beyond the schema ---
const byKind = (kind) => objects.filter((o) => o.kind === kind);
const find = (kind, name) => objects.find((o) => o.kind === kind && o.metadata.name === name);
const check = (ok, what) => { if (!ok) errors.push(what); };
const containers = (o) => [...(o.spec.template.spec.initContainers ?? []), ...o.spec.template.spec.containers];
const flag = (c, name) => {
  const all = [...(c.command ?? []), ...(c.args ?? [])];
  for (let i = 0; i < all.length; ++i) {
    if (all[i].startsWith(`--${name}=`)) return all[i].slice(name.length + 3);
    if (all[i] === `--${name}`) return all[i + 1];
  }
  return undefined;
};

if (!schemaOnly) {
  const config = find("ConfigMap", "taso-config") ??
    objects.find((o) => o.kind === "ConfigMap" && o.metadata.name.startsWith("taso-config"));
  check(config, "ConfigMap taso-config (store list, job spec) is missing");
  const store = find("StatefulSet", "taso-store");
  check(store, "StatefulSet taso-store is missing");
  if (store && config) {
    const svc = find("Service", store.spec.serviceName);
    check(svc && svc.spec.clusterIP === "None", `the store's serviceName ${store.spec.serviceName} must be a headless Service`);
    check((store.spec.volumeClaimTemplates ?? []).length > 0, "the store needs a volumeClaimTemplate (its RocksDB)");
    const count = Number(config.data.STORE_COUNT);
    check(store.spec.replicas === count, `store replicas ${store.spec.replicas} != STORE_COUNT ${count}`);
    const stores = config.data.STORES.split(",");
    check(stores.length === count, `STORES lists ${stores.length} addresses for STORE_COUNT ${count}`);
    stores.forEach((s, i) => check(s.startsWith(`taso-store-${i}.${store.spec.serviceName}`),
      `STORES[${i}] = ${s} is not store ordinal ${i}`));
    const c = store.spec.template.spec.containers[0];
    const index = (c.env ?? []).find((e) => e.name === "STORE_INDEX");
    check(index?.valueFrom?.fieldRef?.fieldPath === "metadata.labels['apps.kubernetes.io/pod-index']",
      "the store's STORE_INDEX must come from its pod ordinal (apps.kubernetes.io/pod-index)");
  }
  const generate = find("Job", "taso-generate");
  check(generate, "Job taso-generate is missing");
  if (generate && config) {
    check(generate.spec.completionMode === "Indexed", "generation must be an Indexed Job (index = shard)");
    check(generate.spec.backoffLimitPerIndex > 0, "generation needs per-index retries (backoffLimitPerIndex)");
    check(String(generate.spec.completions) === config.data.SHARDS,
      `generation completions ${generate.spec.completions} != SHARDS ${config.data.SHARDS}`);
  }
  check(find("Job", "taso-job-create"), "Job taso-job-create (creates the generation job) is missing");
  // The union of the shards is pruned in the cluster (a size-4 job is more
  // than a store prunes in memory), after verification, from the same job.
  const prune = find("Job", "taso-prune");
  check(prune, "Job taso-prune (prunes the verified job over every shard) is missing");
  if (prune) {
    const c = prune.spec.template.spec.containers[0];
    const args = [...(c.command ?? []), ...(c.args ?? [])];
    check(args.slice(0, 3).join(" ") === "taso rules prune", "taso-prune must run `taso rules prune`");
    check(flag(c, "store") === "$(STORES)" && flag(c, "job") === "$(JOB_ID)",
      "taso-prune must prune JOB_ID over STORES (taso-config)");
    check(args.includes("--wait"), "taso-prune must --wait for verification (it is applied with the generation Jobs)");
  }
  const optimizer = find("Deployment", "taso-optimizer");
  check(optimizer && find("Service", "taso-optimizer"), "the optimizer Deployment and Service are missing");
  if (optimizer) {
    const c = optimizer.spec.template.spec.containers[0];
    const limit = Number(flag(c, "max_time_limit_s"));
    check(limit > 0, "the optimizer must set --max_time_limit_s (the grace period covers it)");
    // taso_optimizer drains calls in flight for --max_time_limit_s + 30 s on SIGTERM.
    const drain = limit + 30;
    check(optimizer.spec.template.spec.terminationGracePeriodSeconds >= drain,
      `optimizer grace period ${optimizer.spec.template.spec.terminationGracePeriodSeconds}s < its drain ${drain}s ` +
      `(search limit ${limit}s + 30s)`);
  }
  check(find("Deployment", "taso-verifier"), "Deployment taso-verifier is missing");
  const profiler = find("Deployment", "taso-profiler");
  check(profiler, "Deployment taso-profiler is missing");
  if (profiler) {
    const vols = profiler.spec.template.spec.volumes ?? [];
    check(vols.some((v) => v.persistentVolumeClaim), "the profiler needs its own cache volume (a PVC)");
    // taso_profiler drains measurements in flight for --drain_seconds (default 50) on SIGTERM.
    const drain = Number(flag(profiler.spec.template.spec.containers[0], "drain_seconds") ?? 50);
    check(profiler.spec.template.spec.terminationGracePeriodSeconds >= drain,
      `profiler grace period ${profiler.spec.template.spec.terminationGracePeriodSeconds}s < its drain ${drain}s`);
    const gpu = profiler.spec.template.spec.containers[0].resources?.limits?.["nvidia.com/gpu"];
    if (expectGpu) check(Number(gpu) >= 1, "the profiler must request nvidia.com/gpu");
  }
  // Every server answers health checks on the port it listens on: kubelet's
  // gRPC probe, or, for a TLS server (which that probe cannot reach),
  // `taso health 127.0.0.1:PORT --tls-ca=...` as an exec probe.
  for (const o of [...byKind("Deployment"), ...byKind("StatefulSet")]) {
    for (const c of o.spec.template.spec.containers) {
      const listen = flag(c, "listen");
      if (!listen) continue;
      const port = Number(listen.split(":").pop());
      const tls = flag(c, "tls_cert") !== undefined;
      for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
        const cmd = c[probe]?.exec?.command ?? [];
        const ok = tls ? cmd[0] === "taso" && cmd[1] === "health" && cmd[2] === `127.0.0.1:${port}` &&
                         cmd.some((w) => w.startsWith("--tls-ca="))
                       : c[probe]?.grpc?.port === port;
        check(ok, `${o.kind}/${o.metadata.name}: ${probe} must be ` +
          (tls ? `an exec probe \`taso health 127.0.0.1:${port} --tls-ca=...\`` : `a gRPC probe on port ${port}`));
      }
    }
  }
  // A server off loopback in plaintext refuses to start unless told
  // --insecure (the explicit opt-out, components/plaintext).
  for (const o of [...byKind("Deployment"), ...byKind("StatefulSet")]) {
    for (const c of o.spec.template.spec.containers) {
      const listen = flag(c, "listen");
      if (listen === undefined || /^(127\.0\.0\.1|localhost|\[::1\]):/.test(listen)) continue;
      const insecure = (c.args ?? []).includes("--insecure");
      check(flag(c, "tls_cert") !== undefined || insecure,
        `${o.kind}/${o.metadata.name}: a plaintext server on ${listen} without --insecure refuses to start ` +
        "(add components/secure, or components/plaintext to opt out)");
      if (expectTls) check(!insecure, `${o.kind}/${o.metadata.name}: --insecure in a secure setup`);
    }
  }
  if (expectTls) {
    const secretItems = (o) => (o.spec.template.spec.volumes ?? []).filter((v) => v.secret?.secretName)
      .map((v) => ({ name: v.secret.secretName, items: (v.secret.items ?? []).map((i) => i.key) }));
    const certificateOf = new Map();  // server TLS Secret -> the workload serving with it
    for (const o of [...byKind("Deployment"), ...byKind("StatefulSet"), ...byKind("Job")]) {
      const name = `${o.kind}/${o.metadata.name}`;
      const secrets = secretItems(o);
      for (const c of o.spec.template.spec.containers) {
        const server = flag(c, "listen") !== undefined;
        if (server) {
          for (const f of ["tls_cert", "tls_key", "tokens_file"]) check(flag(c, f), `${name}: a server without --${f}`);
          const own = secrets.filter((x) => x.items.includes("tls.key"));
          check(own.length === 1, `${name}: a server must mount exactly one Secret with its tls.key`);
          for (const x of own) {
            const other = certificateOf.get(x.name);
            check(!other || other === name,
              `${name}: shares its certificate Secret ${x.name} with ${other}; one certificate per service`);
            certificateOf.set(x.name, name);
          }
        }
        const client = ["store", "profiler", "rules_db"].some((f) => flag(c, f) !== undefined);
        if (client) {
          check(flag(c, "tls_ca") ?? flag(c, "tls-ca"), `${name}: a client without --tls_ca`);
          check(flag(c, "token_file") ?? flag(c, "token-file"), `${name}: a client without a token`);
          check(secrets.some((x) => x.items.includes("ca.crt")), `${name}: a client without the CA (ca.crt) mounted`);
        }
        if (server || client) {
          check(secrets.some((x) => x.name === "taso-tokens"), `${name}: the taso-tokens Secret is not mounted`);
        }
      }
      // A renewed certificate reaches a pod only through a whole-volume
      // mount: kubelet never updates a subPath mount (servers re-read theirs).
      for (const c of containers(o)) {
        for (const m of c.volumeMounts ?? []) {
          const volume = (o.spec.template.spec.volumes ?? []).find((v) => v.name === m.name);
          if (volume?.secret?.secretName?.startsWith("taso-") && m.subPath) {
            errors.push(`${name}: mounts Secret ${volume.secret.secretName} by subPath, which a renewal never updates`);
          }
        }
      }
      // Each pod gets only the Secret items it uses: a server key only where
      // something listens, a token only where a process sends it.
      const pod = o.spec.template.spec;
      const listens = containers(o).some((c) => flag(c, "listen") !== undefined);
      const sent = containers(o).flatMap((c) => [flag(c, "token_file"), flag(c, "token-file"),
        ...(c.env ?? []).filter((e) => e.name === "TASO_TOKEN_FILE").map((e) => e.value)]).filter(Boolean);
      for (const v of pod.volumes ?? []) {
        if (!v.secret?.secretName?.startsWith("taso-")) continue;
        const items = (v.secret.items ?? []).map((i) => i.key);
        check(items.length > 0, `${o.kind}/${o.metadata.name}: mounts all of Secret ${v.secret.secretName}; list the items it uses`);
        if (!listens) {
          check(!items.includes("tls.key"), `${o.kind}/${o.metadata.name}: a pod that serves nothing mounts the server key tls.key`);
        }
        for (const token of items.filter((k) => k.endsWith("-token"))) {
          check(sent.some((f) => f.endsWith(`/${token}`)),
            `${o.kind}/${o.metadata.name}: mounts ${token}, which no process in it sends`);
        }
        // The admin role writes what the optimizers apply: only the pruner holds it.
        if (items.includes("admin-token")) {
          check(containers(o).every((c) => [...(c.command ?? []), ...(c.args ?? [])].slice(0, 3).join(" ") ===
                                          "taso rules prune"),
            `${o.kind}/${o.metadata.name}: mounts admin-token, which only taso-prune's \`taso rules prune\` may hold`);
        }
      }
    }
  }
  // Every process serves Prometheus metrics on a declared, annotated port
  // that a NetworkPolicy opens.
  const metricPorts = new Set(byKind("NetworkPolicy").flatMap((np) =>
    (np.spec.ingress ?? []).flatMap((i) => (i.ports ?? []).map((p) => Number(p.port)))));
  for (const o of [...byKind("Deployment"), ...byKind("StatefulSet"), ...byKind("Job")]) {
    const tpl = o.spec.template;
    for (const c of tpl.spec.containers) {
      const listen = flag(c, "metrics_listen");
      if (!listen) {
        // The `taso` CLI's one-shot Jobs (job create, rules prune) serve no metrics.
        if (c.command?.[0] !== "taso") errors.push(`${o.kind}/${o.metadata.name}: no --metrics_listen`);
        continue;
      }
      const port = Number(listen.split(":").pop());
      check((c.ports ?? []).some((p) => p.name === "metrics" && p.containerPort === port),
        `${o.kind}/${o.metadata.name}: metrics port ${port} not declared`);
      check(tpl.metadata?.annotations?.["prometheus.io/port"] === String(port),
        `${o.kind}/${o.metadata.name}: no prometheus.io/port annotation for ${port}`);
      check(metricPorts.has(port), `${o.kind}/${o.metadata.name}: no NetworkPolicy opens metrics port ${port}`);
    }
    check(tpl.metadata?.labels?.["app.kubernetes.io/part-of"] === "taso",
      `${o.kind}/${o.metadata.name}: pods lack app.kubernetes.io/part-of=taso (the policies select on it)`);
  }
  check(byKind("NetworkPolicy").length > 0, "no NetworkPolicy: every pod would accept any connection");
  // The "restricted" Pod Security Standard, on every pod and container.
  for (const o of [...byKind("Deployment"), ...byKind("StatefulSet"), ...byKind("Job")]) {
    const pod = o.spec.template.spec;
    const name = `${o.kind}/${o.metadata.name}`;
    check(pod.securityContext?.runAsNonRoot === true, `${name}: the pod must set runAsNonRoot (restricted)`);
    for (const c of containers(o)) {
      const seccomp = c.securityContext?.seccompProfile?.type ?? pod.securityContext?.seccompProfile?.type;
      check(seccomp === "RuntimeDefault" || seccomp === "Localhost",
        `${name}: container ${c.name} has no seccompProfile RuntimeDefault (restricted)`);
      check(c.securityContext?.allowPrivilegeEscalation === false,
        `${name}: container ${c.name} must set allowPrivilegeEscalation: false (restricted)`);
      check((c.securityContext?.capabilities?.drop ?? []).includes("ALL"),
        `${name}: container ${c.name} must drop ALL capabilities (restricted)`);
    }
    for (const label of ["app.kubernetes.io/name", "app.kubernetes.io/component", "app.kubernetes.io/part-of"]) {
      check(o.spec.template.metadata?.labels?.[label], `${name}: pods lack the recommended label ${label}`);
    }
  }
  // Voluntary disruptions take the store and the optimizer one pod at a time.
  const selects = (pdb, o) => Object.entries(pdb.spec.selector?.matchLabels ?? {}).every(
    ([k, v]) => o.spec.template.metadata?.labels?.[k] === v);
  for (const o of [find("StatefulSet", "taso-store"), find("Deployment", "taso-optimizer")].filter(Boolean)) {
    check(byKind("PodDisruptionBudget").some((pdb) => selects(pdb, o)),
      `${o.kind}/${o.metadata.name}: no PodDisruptionBudget selects its pods`);
  }
  const storeSet = find("StatefulSet", "taso-store");
  if (storeSet) {
    check((storeSet.spec.template.spec.topologySpreadConstraints ?? []).some(
      (t) => t.topologyKey === "kubernetes.io/hostname"), "the store shards must spread over nodes (topologySpreadConstraints)");
  }
  // An Ingress reaches a Service port that exists, over TLS from its clients,
  // speaking to the pods what they serve: gRPC over TLS to a server with
  // --tls_cert (GRPCS), plaintext gRPC otherwise.
  for (const ing of byKind("Ingress")) {
    const name = `Ingress/${ing.metadata.name}`;
    check((ing.spec.tls ?? []).some((t) => t.secretName), `${name}: no tls section with a secretName`);
    for (const rule of ing.spec.rules ?? []) {
      for (const p of rule.http?.paths ?? []) {
        const want = p.backend?.service;
        const svc = want && find("Service", want.name);
        const port = svc?.spec.ports.find((sp) => sp.name === want.port?.name || sp.port === want.port?.number);
        check(port, `${name}: backend ${want?.name}:${want?.port?.name ?? want?.port?.number} is no Service port`);
        if (!port) continue;
        const pods = [...byKind("Deployment"), ...byKind("StatefulSet")].filter((o) =>
          Object.entries(svc.spec.selector ?? {}).every(([k, v]) => o.spec.template.metadata?.labels?.[k] === v));
        const tls = pods.some((o) => o.spec.template.spec.containers.some((c) => flag(c, "tls_cert") !== undefined));
        const protocol = ing.metadata.annotations?.["nginx.ingress.kubernetes.io/backend-protocol"];
        check(protocol === (tls ? "GRPCS" : "GRPC"),
          `${name}: backend-protocol ${protocol} for a ${tls ? "TLS" : "plaintext"} gRPC server (want ${tls ? "GRPCS" : "GRPC"})`);
      }
    }
  }
  for (const o of [...byKind("Deployment"), ...byKind("StatefulSet"), ...byKind("Job")]) {
    for (const c of containers(o)) {
      check(c.image && !c.image.endsWith(":latest"), `${o.kind}/${o.metadata.name}: image ${c.image} must be pinned`);
    }
  }
  // cert-manager: every TLS Secret a pod mounts is a Certificate's, issued
  // by an Issuer in the render; a server's covers the names its clients dial
  // (its Service, and for a headless one its pods) and 127.0.0.1 (the exec
  // probes); the CA clients trust is a CA Certificate.
  const certificates = byKind("Certificate");
  if (expectCertificates) check(certificates.length > 0, "no Certificate: nothing issues the TLS Secrets");
  if (certificates.length > 0) {
    const issuers = new Set(byKind("Issuer").map((i) => i.metadata.name));
    for (const cert of certificates) {
      check(issuers.has(cert.spec.issuerRef.name),
        `Certificate/${cert.metadata.name}: its issuer ${cert.spec.issuerRef.name} is not in the render`);
    }
    const bySecret = new Map(certificates.map((c) => [c.spec.secretName, c]));
    for (const o of [...byKind("Deployment"), ...byKind("StatefulSet"), ...byKind("Job")]) {
      const name = `${o.kind}/${o.metadata.name}`;
      for (const v of o.spec.template.spec.volumes ?? []) {
        const items = (v.secret?.items ?? []).map((i) => i.key);
        if (!v.secret || !(items.includes("tls.key") || items.includes("ca.crt"))) continue;
        const cert = bySecret.get(v.secret.secretName);
        check(cert, `${name}: no Certificate issues the Secret ${v.secret.secretName} it mounts`);
        if (!cert) continue;
        if (!items.includes("tls.key")) {
          check(cert.spec.isCA === true, `${name}: trusts ${v.secret.secretName}, which is no CA Certificate`);
          continue;
        }
        check((cert.spec.ipAddresses ?? []).includes("127.0.0.1"),
          `Certificate/${cert.metadata.name}: does not cover 127.0.0.1, which ${name}'s probes dial`);
        const names = cert.spec.dnsNames ?? [];
        const services = byKind("Service").filter((svc) => Object.entries(svc.spec.selector ?? {}).every(
          ([k, val]) => o.spec.template.metadata?.labels?.[k] === val));
        for (const svc of services) {
          check(names.includes(svc.metadata.name), `Certificate/${cert.metadata.name}: does not cover ${svc.metadata.name}`);
          if (svc.spec.clusterIP === "None") {
            check(names.includes(`*.${svc.metadata.name}`),
              `Certificate/${cert.metadata.name}: does not cover the pods of ${svc.metadata.name} (*.${svc.metadata.name})`);
          }
        }
      }
    }
  }
  // Monitoring: a PodMonitor that selects every pod serving metrics, on the
  // port name those pods declare, and alert rules beside it.
  const monitors = byKind("PodMonitor");
  if (expectMonitoring) {
    check(monitors.length > 0, "no PodMonitor: nothing scrapes the metrics ports");
    check(byKind("PrometheusRule").length > 0, "no PrometheusRule: no alerts on the metrics");
  }
  for (const pm of monitors) {
    const selected = (o) => Object.entries(pm.spec.selector.matchLabels).every(
      ([k, v]) => o.spec.template.metadata?.labels?.[k] === v);
    const portNames = new Set(pm.spec.podMetricsEndpoints.map((e) => e.port));
    for (const o of [...byKind("Deployment"), ...byKind("StatefulSet"), ...byKind("Job")]) {
      const metrics = o.spec.template.spec.containers.flatMap((c) => c.ports ?? []).filter((p) => p.name === "metrics");
      if (metrics.length === 0) continue;
      check(selected(o) && portNames.has("metrics"),
        `PodMonitor/${pm.metadata.name}: does not scrape ${o.kind}/${o.metadata.name}'s metrics port`);
    }
  }
}

for (const e of errors) console.log(`error: ${e}`);
console.log(`${objects.length} objects valid, ${errors.length} errors`);
process.exit(errors.length ? 1 : 0);
