import { describe, expect, it } from 'vitest';
import {
  BrokerConfigError,
  brokerFromEnv,
  brokerFromRecordBlock,
  brokerFromUrl,
  recordBlockOf,
  redactUrl,
} from '../../../src/workflows/mqtt/broker-config.ts';

describe('broker configuration', () => {
  it('brokerFromUrl - moves user and password out of the URL and fills default ports', () => {
    expect(brokerFromUrl('mqtts://alice:s%40cret@broker.local')).toEqual({
      url: 'mqtts://broker.local:8883',
      username: 'alice',
      password: 's@cret',
    });
    expect(brokerFromUrl('ws://127.0.0.1:9001')).toEqual({ url: 'ws://127.0.0.1:9001/mqtt' });
    expect(brokerFromUrl('mqtt://[::1]:1884').url).toBe('mqtt://[::1]:1884');
  });

  it('brokerFromUrl - rejects other protocols and non-URLs without echoing the password', () => {
    expect(() => brokerFromUrl('http://x:1')).toThrow(BrokerConfigError);
    expect(() => brokerFromUrl('not a url')).toThrow(/is not a URL/);
    expect(() => brokerFromUrl('tcp://u:pw@h:1')).toThrow(/unsupported protocol 'tcp:'/);
  });

  it('brokerFromEnv - reads the seed variables and is undefined without MQTT_BROKER', () => {
    expect(brokerFromEnv({})).toBeUndefined();
    expect(brokerFromEnv({ MQTT_BROKER: '10.0.0.5', MQTT_PORT: '1999' })).toEqual({ url: 'mqtt://10.0.0.5:1999' });
    expect(
      brokerFromEnv({
        MQTT_BROKER: 'b',
        MQTT_TLS: '1',
        MQTT_USERNAME: 'u',
        MQTT_PASSWORD: 'p',
        MQTT_CA_CERTS: '/ca.pem',
        MQTT_CERTFILE: '/c.pem',
        MQTT_KEYFILE: '/k.pem',
      }),
    ).toEqual({ url: 'mqtts://b:8883', username: 'u', password: 'p', caFile: '/ca.pem', certFile: '/c.pem', keyFile: '/k.pem' });
    expect(() => brokerFromEnv({ MQTT_BROKER: 'b', MQTT_PORT: 'http' })).toThrow(/MQTT_PORT='http'/);
  });

  it('brokerFromRecordBlock - the record says where, the env overrides MQTT_TLS and supplies the password', () => {
    const block = { host: '127.0.0.1', port: 1883, tls: false, username: 'bob' };
    expect(brokerFromRecordBlock(block, { MQTT_PASSWORD: 'pw' })).toEqual({
      url: 'mqtt://127.0.0.1:1883',
      username: 'bob',
      password: 'pw',
    });
    expect(brokerFromRecordBlock(block, { MQTT_TLS: '1' }).url).toBe('mqtts://127.0.0.1:1883');
  });

  it('recordBlockOf - never writes a password into the record', () => {
    expect(recordBlockOf({ url: 'mqtts://h:8883', username: 'u', password: 'p' })).toEqual({
      host: 'h',
      port: 8883,
      tls: true,
      username: 'u',
      password: null,
    });
  });

  it('redactUrl - hides credentials', () => {
    expect(redactUrl('mqtt://u:p@h:1')).toBe('mqtt://***@h:1');
  });
});
