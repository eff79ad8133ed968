// Bundles the dashboard's front end (ui/, TypeScript) with esbuild into dist/ui/, beside the static
// page and style, so the package serves it without esbuild (a dev dependency). Run by `npm run build`.
import { copyFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { build, type BuildOptions } from 'esbuild';
import { esbuildOptions, UI_BUILD_DIR, UI_SOURCE_DIR, UI_STATIC } from '../src/ui/assets.ts';

mkdirSync(UI_BUILD_DIR, { recursive: true });
await build({ ...(esbuildOptions(UI_BUILD_DIR) as BuildOptions), write: true });
for (const name of UI_STATIC) copyFileSync(path.join(UI_SOURCE_DIR, name), path.join(UI_BUILD_DIR, name));
