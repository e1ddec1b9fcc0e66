#!/usr/bin/env bash
# Vendor KaTeX into docs/assets/katex/. The build renders math with katex.min.js
# under Node.js (src/autograd_traced/math.py, not shipped to readers); the site
# serves only the CSS and fonts, so no request leaves its own origin (no CDN).
#
# Upgrade KaTeX:
#   1. set KATEX_VERSION below to the new version and empty KATEX_INTEGRITY,
#   2. run  scripts/vendor_katex.sh ,
#   3. paste the integrity it prints into KATEX_INTEGRITY, run it again
#      and commit the script with docs/assets/katex/.
# (Or try a version without editing: KATEX_VERSION=x.y.z scripts/vendor_katex.sh)
#
# Needs: npm, node, tar. Only the npm registry is contacted.
#
# What it writes (docs/assets/katex/ is deleted and rebuilt):
#   katex.min.js (build time only), LICENSE, VERSION
#   katex.min.css   - every @font-face src rewritten to list only its woff2 url
#   fonts/*.woff2   - woff2 only (no .woff/.ttf), so the CSS must not name them
set -euo pipefail

DEFAULT_KATEX_VERSION="0.19.1"
DEFAULT_KATEX_INTEGRITY="sha512-jG8uKntjSEcm2EpQOh0XturpPuuC9r3Sq5HLHdsFdWZT27E672SF19QEi+of0/YeOy15lDgRhKvr5614uRrEfA=="

KATEX_VERSION="${KATEX_VERSION:-$DEFAULT_KATEX_VERSION}"
if [[ "$KATEX_VERSION" == "$DEFAULT_KATEX_VERSION" ]]; then
  KATEX_INTEGRITY="${KATEX_INTEGRITY:-$DEFAULT_KATEX_INTEGRITY}"
else
  KATEX_INTEGRITY="${KATEX_INTEGRITY:-}"
fi

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$repo_root/docs/assets/katex"

for tool in npm node tar; do
  command -v "$tool" >/dev/null || { echo "error: '$tool' not found" >&2; exit 1; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "==> npm pack katex@$KATEX_VERSION"
# npm itself checks the tarball against the registry's integrity field.
( cd "$work" && npm pack "katex@$KATEX_VERSION" --json --silent >pack.json )
tarball="$work/$(node -e 'console.log(require(process.argv[1])[0].filename)' "$work/pack.json")"
[[ -f "$tarball" ]] || { echo "error: npm pack produced no tarball" >&2; exit 1; }

# Our own check against the pinned hash, independent of what the registry says.
actual_integrity="sha512-$(node -e '
  const c = require("crypto"), fs = require("fs");
  console.log(c.createHash("sha512").update(fs.readFileSync(process.argv[1])).digest("base64"));
' "$tarball")"
if [[ -n "$KATEX_INTEGRITY" ]]; then
  if [[ "$actual_integrity" != "$KATEX_INTEGRITY" ]]; then
    echo "error: integrity mismatch for katex@$KATEX_VERSION" >&2
    echo "  expected $KATEX_INTEGRITY" >&2
    echo "  got      $actual_integrity" >&2
    exit 1
  fi
  echo "==> integrity OK ($actual_integrity)"
else
  echo "warning: no pinned integrity for katex@$KATEX_VERSION; pin this in $0:" >&2
  echo "  DEFAULT_KATEX_INTEGRITY=\"$actual_integrity\"" >&2
fi

tar -xzf "$tarball" -C "$work"
pkg="$work/package"
dist="$pkg/dist"
packed_version="$(node -e 'console.log(require(process.argv[1]).version)' "$pkg/package.json")"
[[ "$packed_version" == "$KATEX_VERSION" ]] || {
  echo "error: tarball is katex@$packed_version, wanted $KATEX_VERSION" >&2; exit 1; }

echo "==> writing $dest"
rm -rf "$dest"
mkdir -p "$dest/fonts"
cp "$dist/katex.min.js" "$dest/"
cp "$pkg/LICENSE" "$dest/LICENSE"
cp "$dist"/fonts/*.woff2 "$dest/fonts/"

# Rewrite katex.min.css: keep only the woff2 entry of each @font-face src,
# then check that every url() it names exists and every copied font is used.
node - "$dist/katex.min.css" "$dest/katex.min.css" "$dest" <<'EOF'
const fs = require("fs"), path = require("path");
const [src, out, dest] = process.argv.slice(2);
let css = fs.readFileSync(src, "utf8");
let faces = 0;
css = css.replace(/@font-face\s*\{[^}]*\}/g, (face) => {
  faces++;
  return face.replace(/(^|[{;])(\s*src\s*:)([^;}]*)/, (m, pre, prop, value) => {
    const woff2 = value.split(/,(?=\s*url\()/).map((s) => s.trim())
      .filter((s) => /format\(\s*["']woff2["']\s*\)/.test(s));
    if (woff2.length !== 1) throw new Error("no single woff2 src in: " + face);
    return pre + prop + woff2[0];
  });
});
const urls = [...css.matchAll(/url\(\s*["']?([^"')]+)["']?\s*\)/g)].map((m) => m[1]);
const bad = urls.filter((u) => !/\.woff2$/.test(u));
if (bad.length) throw new Error("non-woff2 url() left in CSS: " + bad.join(", "));
const missing = urls.filter((u) => !fs.existsSync(path.join(dest, u)));
if (missing.length) throw new Error("CSS names fonts that were not copied: " + missing.join(", "));
const used = new Set(urls.map((u) => path.basename(u)));
for (const f of fs.readdirSync(path.join(dest, "fonts"))) {
  if (!used.has(f)) { fs.unlinkSync(path.join(dest, "fonts", f)); console.log("    dropped unused font " + f); }
}
if (faces === 0 || urls.length !== faces) throw new Error(`expected one url per @font-face (${faces} faces, ${urls.length} urls)`);
fs.writeFileSync(out, css);
console.log(`    katex.min.css: ${faces} @font-face rules, woff2 only`);
EOF

cat >"$dest/VERSION" <<EOF
katex $KATEX_VERSION
integrity $actual_integrity
source npm registry (npm pack katex@$KATEX_VERSION), vendored by scripts/vendor_katex.sh
EOF

echo "==> done: katex $KATEX_VERSION, $(du -sh "$dest" | cut -f1) in ${dest#"$repo_root"/}"
