// Checks every link in the given markdown files: each must be relative and
// resolve to a file in the repository (and, for #anchor, to a heading of the
// markdown file it names). Exits 1 when any does not. Code spans and blocks
// are skipped: commands there are not links.
const fs = require('fs'), path = require('path');
const slug = h => h.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
const anchorsOf = f => {
  const text = fs.readFileSync(f, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set(text.split('\n').filter(l => /^#{1,6} /.test(l)).map(l => slug(l.replace(/^#+ /, '').replace(/`/g, ''))));
};
let bad = 0, n = 0;
for (const f of process.argv.slice(2)) {
  const text = fs.readFileSync(f, 'utf8').replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const link = m[1];
    if (/^[a-z]+:/i.test(link)) { console.log(`${f}: external link ${link}`); bad++; continue; }
    n++;
    const [p, anchor] = link.split('#');
    const target = p ? path.resolve(path.dirname(f), p) : path.resolve(f);
    if (!fs.existsSync(target)) { console.log(`${f}: missing file ${link}`); bad++; continue; }
    if (anchor && target.endsWith('.md') && !anchorsOf(target).has(anchor)) { console.log(`${f}: missing anchor ${link}`); bad++; }
  }
}
console.log(`${n} relative links checked, ${bad} problems`);
process.exit(bad ? 1 : 0);
