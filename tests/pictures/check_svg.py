#!/usr/bin/python3
"""Checks a picture taso wrote: check_svg.py FILE.svg [--text WORD]... [--added WORD]... [--removed WORD]...

The file must parse as XML with an <svg> root (Graphviz's SVG). --text WORD: some
<text> of the picture holds WORD. --added / --removed WORD: some node drawn as added
(green fill) / removed (red fill) has a <text> holding WORD (the diff picture's colours,
pictures/node_look.cc). Exits 1 naming what is missing."""
import argparse
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
FILLS = {"added": "#c9ecc9", "removed": "#f7c8c8"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("svg")
    parser.add_argument("--text", action="append", default=[])
    parser.add_argument("--added", action="append", default=[])
    parser.add_argument("--removed", action="append", default=[])
    args = parser.parse_args()
    try:
        root = ET.parse(args.svg).getroot()
    except ET.ParseError as e:
        sys.exit("%s: not XML: %s" % (args.svg, e))
    if root.tag != SVG + "svg":
        sys.exit("%s: the root is <%s>, not <svg>" % (args.svg, root.tag))
    texts = [t.text or "" for t in root.iter(SVG + "text")]
    missing = ["text %r" % w for w in args.text if not any(w in t for t in texts)]
    for kind in ("added", "removed"):
        node_texts = []
        for g in root.iter(SVG + "g"):
            if g.get("class") != "node":
                continue
            if any(shape.get("fill") == FILLS[kind] for shape in g if shape.tag in (SVG + "path", SVG + "polygon", SVG + "ellipse")):
                node_texts += [t.text or "" for t in g.iter(SVG + "text")]
        missing += ["%s node with %r" % (kind, w) for w in getattr(args, kind) if not any(w in t for t in node_texts)]
    if missing:
        sys.exit("%s: missing %s" % (args.svg, "; ".join(missing)))
    print("%s: valid SVG, %d texts" % (args.svg, len(texts)))


if __name__ == "__main__":
    main()
