// The package.json that goes into the tarball, without `prepare`. `prepare` builds fw-http from
// source on a git or file: install; a tarball holds the build already, and npm 11 lists a
// `prepare` of a tarball installed from a file as an install script to review
// (`npm warn install-scripts`). So prepack saves package.json and writes it without that script;
// postpack puts the saved one back. A pack that died in between is repaired by the next prepack.
//
//   node scripts/pack-manifest.mjs strip     (prepack, after the build)
//   node scripts/pack-manifest.mjs restore   (postpack)
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

const MANIFEST = 'package.json';
const SAVED = 'dist/package.json.before-pack';

function restore() {
  if (!existsSync(SAVED)) return;
  writeFileSync(MANIFEST, readFileSync(SAVED));
  rmSync(SAVED);
}

function strip() {
  restore();
  const text = readFileSync(MANIFEST, 'utf8');
  const manifest = JSON.parse(text);
  mkdirSync('dist', { recursive: true });
  writeFileSync(SAVED, text);
  delete manifest.scripts.prepare;
  writeFileSync(MANIFEST, JSON.stringify(manifest, null, 2) + '\n');
}

const mode = process.argv[2];
if (mode === 'strip') strip();
else if (mode === 'restore') restore();
else {
  console.error('usage: node scripts/pack-manifest.mjs strip|restore');
  process.exit(2);
}
