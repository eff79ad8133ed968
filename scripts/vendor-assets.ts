// Copies the browser libraries the dashboard and the MassGen bundle serve into dist/vendor/, so
// the package carries them (no CDN, no download at install) while they stay dev dependencies.
// Run by `npm run build`.
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../src/engine/paths/package-root.ts';
import { nodeModulesAsset, VENDOR_ASSETS, type VendorAsset } from '../src/engine/paths/vendor-asset.ts';

const out = path.join(PACKAGE_ROOT, 'dist', 'vendor');
mkdirSync(out, { recursive: true });
for (const name of Object.keys(VENDOR_ASSETS) as VendorAsset[]) {
  const from = nodeModulesAsset(name);
  if (!from) throw new Error(`vendor-assets: ${VENDOR_ASSETS[name]} is not installed; run npm ci`);
  copyFileSync(from, path.join(out, name));
}
