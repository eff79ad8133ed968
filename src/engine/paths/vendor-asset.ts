import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { PACKAGE_ROOT } from './package-root.ts';

/** Browser libraries the dashboard and the MassGen bundle serve, by file name: where npm has them. */
export const VENDOR_ASSETS = {
  'mermaid.min.js': 'mermaid/dist/mermaid.min.js',
  'marked.umd.js': 'marked/lib/marked.umd.js',
  'purify.min.js': 'dompurify/dist/purify.min.js',
  'uPlot.iife.min.js': 'uplot/dist/uPlot.iife.min.js',
  'uPlot.min.css': 'uplot/dist/uPlot.min.css',
  'dagre.min.js': '@dagrejs/dagre/dist/dagre.min.js',
} as const;

export type VendorAsset = keyof typeof VENDOR_ASSETS;

/** Where the dev dependency has the file (a clone), or undefined (an installed package has no dev dependencies). */
export function nodeModulesAsset(name: VendorAsset): string | undefined {
  const specifier = VENDOR_ASSETS[name];
  try {
    return createRequire(path.join(PACKAGE_ROOT, 'package.json')).resolve(specifier);
  } catch {
    // A package whose `exports` hides the file: it is still where npm put it.
    const file = path.join(PACKAGE_ROOT, 'node_modules', specifier);
    return existsSync(file) ? file : undefined;
  }
}

/**
 * The file of a browser library: dist/vendor/ in an installed package (the build copies them
 * there, so they ship without a CDN while staying dev dependencies), else node_modules in a
 * clone before its first build. Undefined when neither is there.
 */
export function vendorAssetPath(name: VendorAsset): string | undefined {
  const built = path.join(PACKAGE_ROOT, 'dist', 'vendor', name);
  return existsSync(built) ? built : nodeModulesAsset(name);
}
