import { BlockList, isIP } from 'node:net';

/**
 * Addresses a webhook may not reach (docs/alerts.md, "Webhook safety"): this machine, private and
 * shared networks, link-local (the cloud's instance metadata lives there), multicast and reserved
 * ranges, in IPv4 and IPv6, and IPv4 written inside IPv6.
 */
const blocked = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const)
  blocked.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 127],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  blocked.addSubnet(network, prefix, 'ipv6');

/** IPv4 carried in an IPv6 address (`::ffff:10.0.0.1`, `::ffff:a00:1`), as the IPv4 a connection reaches. */
function embeddedIpv4(address: string): string | undefined {
  const mapped = /^::ffff:(?:0:)?([\d.]+|[\da-f]{1,4}:[\da-f]{1,4})$/i.exec(address);
  if (!mapped) return undefined;
  if (isIP(mapped[1]) === 4) return mapped[1];
  const [high, low] = mapped[1].split(':').map((part) => parseInt(part, 16));
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Whether a webhook may connect to this address (an IP literal); anything unparsable is refused. */
export function isPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return false;
  if (family === 4) return !blocked.check(bare, 'ipv4');
  const ipv4 = embeddedIpv4(bare.toLowerCase());
  if (ipv4) return !blocked.check(ipv4, 'ipv4');
  return !blocked.check(bare, 'ipv6');
}
