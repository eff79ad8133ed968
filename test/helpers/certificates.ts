import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { systemTool, toolPath } from './system-tools.ts';

/** Gate tests that make certificates with skipWithout(OPENSSL). */
export const OPENSSL = systemTool('openssl');

/** A private CA, a server certificate for 127.0.0.1 and a client certificate, all made with openssl. */
export function makeCertificates(dir: string): Record<'ca' | 'caKey' | 'server' | 'serverKey' | 'client' | 'clientKey', string> {
  const f = (name: string): string => path.join(dir, name);
  const openssl = (...args: string[]): void => {
    execFileSync(toolPath(OPENSSL), args, { cwd: dir, stdio: 'ignore' });
  };
  openssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=refinery test CA',
  );
  writeFileSync(f('server.ext'), 'subjectAltName=IP:127.0.0.1\n');
  for (const who of ['server', 'client']) {
    openssl(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      f(`${who}.key`),
      '-out',
      f(`${who}.csr`),
      '-subj',
      `/CN=${who === 'server' ? '127.0.0.1' : 'refinery-client'}`,
    );
    openssl(
      'x509',
      '-req',
      '-in',
      f(`${who}.csr`),
      '-CA',
      f('ca.pem'),
      '-CAkey',
      f('ca.key'),
      '-CAcreateserial',
      '-out',
      f(`${who}.pem`),
      '-days',
      '2',
      ...(who === 'server' ? ['-extfile', f('server.ext')] : []),
    );
  }
  return {
    ca: f('ca.pem'),
    caKey: f('ca.key'),
    server: f('server.pem'),
    serverKey: f('server.key'),
    client: f('client.pem'),
    clientKey: f('client.key'),
  };
}
