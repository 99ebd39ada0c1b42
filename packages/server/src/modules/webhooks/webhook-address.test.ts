import { describe, expect, it } from 'vitest';
import { privateAddressReason, privateHostReason } from './webhook-address.js';

describe('webhook address classifier', () => {
  it.each([
    ['127.0.0.1', /loopback/], ['127.255.255.254', /loopback/], ['10.0.0.1', /private/], ['10.255.255.255', /private/],
    ['172.16.0.1', /private/], ['172.31.255.255', /private/], ['192.168.1.1', /private/], ['169.254.169.254', /link-local/],
    ['100.64.0.1', /shared/], ['100.127.255.255', /shared/], ['0.0.0.0', /this network/], ['224.0.0.1', /multicast/], ['255.255.255.255', /reserved/],
    ['::1', /loopback/], ['::', /unspecified/], ['fc00::1', /unique-local/], ['fd12:3456::1', /unique-local/], ['fe80::1', /link-local/],
    ['fe80::1%eth0', /link-local/], ['febf::1', /link-local/], ['ff02::1', /multicast/],
    ['::ffff:127.0.0.1', /IPv4-mapped .*loopback/], ['::ffff:7f00:1', /IPv4-mapped .*loopback/], ['::ffff:10.1.2.3', /IPv4-mapped .*private/],
    ['0:0:0:0:0:ffff:c0a8:0101', /IPv4-mapped .*private/], ['::127.0.0.1', /IPv4-compatible .*loopback/], ['64:ff9b::a00:1', /NAT64 .*private/],
    ['2002:7f00:1::1', /6to4 .*loopback/], ['[::1]', /loopback/],
  ])('%s is refused (%s)', (address, why) => {
    expect(privateAddressReason(address)).toMatch(why);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '169.253.255.255', '11.0.0.1', '192.169.0.1',
    '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:8.8.8.8', 'fbff::1', 'fec0::1'.replace('fec0', '2400'), '64:ff9b::808:808'])('%s is public', (address) => {
    expect(privateAddressReason(address)).toBeNull();
  });

  it('anything that is not an IP address is refused rather than passed', () => {
    for (const bad of ['example.com', '', '1.2.3', '::g', '1::2::3', '::ffff:999.1.1.1']) expect(privateAddressReason(bad)).not.toBeNull();
  });

  it('judges URL hosts without resolving: localhost names and IP literals; other names pass to delivery time', () => {
    expect(privateHostReason('localhost')).toMatch(/loopback/);
    expect(privateHostReason('LOCALHOST.')).toMatch(/loopback/);
    expect(privateHostReason('api.localhost')).toMatch(/loopback/);
    expect(privateHostReason('[::1]')).toMatch(/loopback/);
    expect(privateHostReason('[::ffff:7f00:1]')).toMatch(/loopback/);
    expect(privateHostReason('192.168.0.10')).toMatch(/private/);
    expect(privateHostReason('example.com')).toBeNull();
    expect(privateHostReason('93.184.216.34')).toBeNull();
    // The URL parser's canonical forms of odd IPv4 spellings are what is judged.
    expect(privateHostReason(new URL('http://2130706433/').hostname)).toMatch(/loopback/);
    expect(privateHostReason(new URL('http://0x7f.1/').hostname)).toMatch(/loopback/);
    expect(privateHostReason(new URL('http://[::ffff:127.0.0.1]/').hostname)).toMatch(/loopback/);
  });
});
