// refinery worker and run --workers through a mosquitto that takes only TLS clients with a user
// and password (MQTT_USERNAME, MQTT_PASSWORD, MQTT_CA_CERTS, as the jobs commands read them):
// the run goes through, the password shows nowhere, and a wrong one stops the worker with a
// reason instead of a silent wait.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeCertificates, OPENSSL } from '../../helpers/certificates.ts';
import { MOSQUITTO, startMosquitto, type MosquittoBroker } from '../../helpers/mosquitto.ts';
import { NGINX, startNginxCache, type NginxCache } from '../../helpers/nginx-cache.ts';
import type { TempProject } from '../../helpers/project.ts';
import { skipWithout, systemTool, toolPath } from '../../helpers/system-tools.ts';
import { GRID_PIPELINE, projectClone, spawnCli, stageEndsOf, stopAll, uniqueProject, type Proc } from './harness.ts';

const mosquittoPasswd = systemTool('mosquitto_passwd');
const PASSWORD = 'broker-pw-9Qx4Lm2Zr7';

/** Every file under a folder as one string (refinery's state included), to look for the password. */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => readFileSync(path.join(e.parentPath, e.name), 'latin1'))
    .join('\n');
}

describe.skipIf(skipWithout(MOSQUITTO, mosquittoPasswd, OPENSSL, NGINX))('workers over TLS with a broker password', () => {
  let dir: string;
  let broker: MosquittoBroker;
  let cache: NginxCache;
  let ca: string;
  let procs: Proc[] = [];
  const clones: TempProject[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'refinery-workers-tls-'));
    const certs = makeCertificates(dir);
    ca = certs.ca;
    const passwords = path.join(dir, 'passwd');
    execFileSync(toolPath(mosquittoPasswd), ['-b', '-c', passwords, 'fleet', PASSWORD]);
    broker = await startMosquitto({ passwordFile: passwords, tls: { caFile: certs.ca, certFile: certs.server, keyFile: certs.serverKey } });
    cache = await startNginxCache();
  });
  afterEach(async () => {
    await stopAll(procs);
    procs = [];
  });
  afterAll(async () => {
    for (const c of clones) c.cleanup();
    await broker?.dispose();
    await cache?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  const url = (): string => `mqtts://127.0.0.1:${broker.port}`;
  const credentials = (password: string): NodeJS.ProcessEnv => ({ MQTT_USERNAME: 'fleet', MQTT_PASSWORD: password, MQTT_CA_CERTS: ca });

  async function tlsWorker(clone: TempProject, name: string, password: string): Promise<Proc> {
    const proc = spawnCli(
      ['worker', '--broker', url(), '--remote-cache', cache.url, '-j', '2', '--name', name],
      clone.root,
      credentials(password),
    );
    procs.push(proc);
    await Promise.race([proc.waitFor(/taking jobs from/), proc.exited]);
    return proc;
  }

  it('workers - mqtts with MQTT_USERNAME, MQTT_PASSWORD and MQTT_CA_CERTS: the stages run on the worker, and the password is in no output or file', async () => {
    const project = uniqueProject();
    const [a, here] = [0, 1].map(() => projectClone(project, { grid: GRID_PIPELINE })) as [TempProject, TempProject];
    clones.push(a, here);
    const worker = await tlsWorker(a, 'w1', PASSWORD);
    const run = spawnCli(['run', 'grid', '--json', '--workers', url(), '--remote-cache', cache.url], here.root, credentials(PASSWORD));
    procs.push(run);
    const result = await run.exited;
    expect(result.code, result.stderr).toBe(0);
    const ends = Object.values(stageEndsOf(result.stdout));
    expect(ends).toHaveLength(8);
    for (const e of ends) expect(e).toMatchObject({ status: 'succeeded', worker: 'w1' });
    for (const text of [result.stdout, result.stderr, worker.stdout(), worker.stderr(), allText(a.root), allText(here.root)])
      expect(text).not.toContain(PASSWORD);
  });

  it("worker - a wrong broker password: it stops with the broker's refusal, names the broker, and does not print the password", async () => {
    const clone = projectClone(uniqueProject(), { grid: GRID_PIPELINE });
    clones.push(clone);
    const worker = await tlsWorker(clone, 'w1', 'not-the-password');
    const result = await worker.exited;
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`127.0.0.1:${broker.port}`);
    expect(result.stderr.toLowerCase()).toMatch(/not authori[sz]ed|bad user name or password/);
    expect(result.stderr + result.stdout).not.toContain('not-the-password');
  });
});
