// The dashboard's own front end (ui/, typed TypeScript) and the browser libraries it uses, all
// served from the package: nothing comes from a CDN. `npm run build` bundles ui/ with esbuild into
// dist/ui/; in a clone whose ui/ is newer than that build (or that has none), the server bundles it
// in memory at start, so an edit is served without a build step.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../engine/paths/package-root.ts';
import { VENDOR_ASSETS, vendorAssetPath, type VendorAsset } from '../engine/paths/vendor-asset.ts';

export interface Asset {
  body: Buffer;
  type: string;
}

export const UI_SOURCE_DIR = path.join(PACKAGE_ROOT, 'ui');
export const UI_BUILD_DIR = path.join(PACKAGE_ROOT, 'dist', 'ui');

/** The bundles esbuild makes from ui/ and the static files copied beside them. */
export const UI_ENTRIES = { app: 'main.ts', 'layout-worker': 'layout-worker.ts' } as const;
export const UI_STATIC = ['index.html', 'app.css'] as const;

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
};

function typeOf(name: string): string {
  return TYPES[path.extname(name)] ?? 'application/octet-stream';
}

function newestIn(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestIn(full) : statSync(full).mtimeMs);
  }
  return newest;
}

function buildIsCurrent(): boolean {
  const names = [...Object.keys(UI_ENTRIES).map((n) => `${n}.js`), ...UI_STATIC];
  if (!names.every((n) => existsSync(path.join(UI_BUILD_DIR, n)))) return false;
  if (!existsSync(UI_SOURCE_DIR)) return true;
  const built = Math.min(...names.map((n) => statSync(path.join(UI_BUILD_DIR, n)).mtimeMs));
  return built >= newestIn(UI_SOURCE_DIR);
}

/** esbuild's options for the front end; `scripts/build-ui.ts` writes with them, the server builds in memory. */
export function esbuildOptions(outdir: string): Record<string, unknown> {
  return {
    entryPoints: Object.fromEntries(Object.entries(UI_ENTRIES).map(([out, src]) => [out, path.join(UI_SOURCE_DIR, src)])),
    bundle: true,
    format: 'iife',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    outdir,
    logLevel: 'silent',
  };
}

async function buildInMemory(): Promise<Map<string, Asset>> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({ ...(esbuildOptions(UI_BUILD_DIR) as Parameters<typeof esbuild.build>[0]), write: false });
  const assets = new Map<string, Asset>();
  for (const file of result.outputFiles ?? [])
    assets.set(path.basename(file.path), { body: Buffer.from(file.contents), type: typeOf(file.path) });
  for (const name of UI_STATIC) assets.set(name, { body: readFileSync(path.join(UI_SOURCE_DIR, name)), type: typeOf(name) });
  return assets;
}

function readBuilt(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of [...Object.keys(UI_ENTRIES).map((n) => `${n}.js`), ...UI_STATIC])
    assets.set(name, { body: readFileSync(path.join(UI_BUILD_DIR, name)), type: typeOf(name) });
  return assets;
}

/** The front end's files by name (app.js, layout-worker.js, index.html, app.css). */
export async function loadUiAssets(): Promise<Map<string, Asset>> {
  if (buildIsCurrent()) return readBuilt();
  if (!existsSync(UI_SOURCE_DIR))
    throw new Error(`the dashboard's front end is missing: neither ${UI_BUILD_DIR} nor ${UI_SOURCE_DIR} exists; reinstall refinery`);
  try {
    return await buildInMemory();
  } catch (error) {
    if (existsSync(path.join(UI_BUILD_DIR, 'app.js'))) return readBuilt();
    throw new Error(`cannot bundle the dashboard's front end (${(error as Error).message}); run npm run build`);
  }
}

const vendorCache = new Map<string, Asset>();

/** A browser library by file name (mermaid.min.js, ...), or undefined for any other name. */
export function vendorAsset(name: string): Asset | undefined {
  if (!Object.hasOwn(VENDOR_ASSETS, name)) return undefined;
  const cached = vendorCache.get(name);
  if (cached) return cached;
  const file = vendorAssetPath(name as VendorAsset);
  if (!file) return undefined;
  const asset = { body: readFileSync(file), type: typeOf(name) };
  vendorCache.set(name, asset);
  return asset;
}
