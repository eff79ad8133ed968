import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { massgenIdentity } from '../../../src/workflows/massgen/experiments/massgen-identity.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tree(files: Record<string, string>, executables: string[] = []): string {
  // Real: the script a link leads to is named by its real path.
  const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'refinery-identity-')));
  dirs.push(root);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  }
  for (const rel of executables) chmodSync(path.join(root, rel), 0o755);
  return root;
}

it('massgenIdentity - `uv run massgen`: uv where PATH finds it (and the places before it), the project .venv dist-info and uv.lock', () => {
  const root = tree(
    {
      'tools/bin/uv': '#!/bin/sh\n',
      'project/uv.lock': 'version = 1\n',
      'project/.venv/lib/python3.12/site-packages/massgen-0.1.91.dist-info/METADATA': 'Version: 0.1.91\n',
    },
    ['tools/bin/uv'],
  );
  const project = path.join(root, 'project');
  const reads = massgenIdentity(['uv', 'run', 'massgen'], project, { PATH: `${root}/empty:${root}/tools/bin:${root}/later` });
  expect(reads).toEqual([
    `${root}/empty/uv`,
    `${root}/tools/bin/uv`,
    `${project}/.venv/lib/python3.12/site-packages/massgen-0.1.91.dist-info/METADATA`,
    `${project}/uv.lock`,
  ]);
});

it('massgenIdentity - a pipx install: the link on PATH, the script it leads to and the dist-info of that venv', () => {
  const root = tree(
    {
      'pipx/venvs/massgen/bin/massgen': '#!/usr/bin/python3\n',
      'pipx/venvs/massgen/lib/python3.11/site-packages/massgen-0.1.92.dist-info/METADATA': 'Version: 0.1.92\n',
      'project/configs/a.yaml': 'agents: []\n',
    },
    ['pipx/venvs/massgen/bin/massgen'],
  );
  mkdirSync(path.join(root, 'home/bin'), { recursive: true });
  symlinkSync(path.join(root, 'pipx/venvs/massgen/bin/massgen'), path.join(root, 'home/bin/massgen'));
  const project = path.join(root, 'project');
  const reads = massgenIdentity(['massgen', '--logfire'], project, { PATH: `${root}/home/bin` });
  expect(reads).toEqual([
    `${root}/home/bin/massgen`,
    `${root}/pipx/venvs/massgen/bin/massgen`,
    `${root}/pipx/venvs/massgen/lib/python3.11/site-packages/massgen-0.1.92.dist-info/METADATA`,
    `${project}/uv.lock`,
  ]);
});

it('massgenIdentity - a program given by path and a script word: both, and nothing looked up on PATH', () => {
  const root = tree({ 'bin/node': '', 'fake.mjs': '' }, ['bin/node']);
  expect(massgenIdentity(['bin/node', 'fake.mjs'], root, { PATH: '/nowhere' })).toEqual([
    `${root}/bin/node`,
    `${root}/fake.mjs`,
    `${root}/uv.lock`,
  ]);
});
