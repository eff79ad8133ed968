import { describe, expect, it } from 'vitest';
import { DEFERRED_CA_VARIABLE, restoreDeferredCa } from '../../../src/cli/deferred-ca.ts';

describe('restoreDeferredCa', () => {
  it('restoreDeferredCa - a deferred variable is put back, and the process is said to lack the certificates', () => {
    const env: NodeJS.ProcessEnv = { [DEFERRED_CA_VARIABLE]: '/etc/corp-ca.pem', PATH: '/bin' };
    expect(restoreDeferredCa(env)).toBe(true);
    expect(env).toEqual({ NODE_EXTRA_CA_CERTS: '/etc/corp-ca.pem', PATH: '/bin' });
  });

  it('restoreDeferredCa - without a deferred variable nothing changes', () => {
    const env: NodeJS.ProcessEnv = { NODE_EXTRA_CA_CERTS: '/etc/corp-ca.pem' };
    expect(restoreDeferredCa(env)).toBe(false);
    expect(env).toEqual({ NODE_EXTRA_CA_CERTS: '/etc/corp-ca.pem' });
  });

  it('restoreDeferredCa - a NODE_EXTRA_CA_CERTS set again since stands (Node read it), and the deferred one is dropped', () => {
    const env: NodeJS.ProcessEnv = { [DEFERRED_CA_VARIABLE]: '/old.pem', NODE_EXTRA_CA_CERTS: '/new.pem' };
    expect(restoreDeferredCa(env)).toBe(false);
    expect(env).toEqual({ NODE_EXTRA_CA_CERTS: '/new.pem' });
  });

  it('restoreDeferredCa - an empty deferred variable is dropped, not restored', () => {
    const env: NodeJS.ProcessEnv = { [DEFERRED_CA_VARIABLE]: '' };
    expect(restoreDeferredCa(env)).toBe(false);
    expect(env).toEqual({});
  });
});
