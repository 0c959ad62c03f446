/**
 * The webhook address rule against the IANA special-purpose address registries themselves (IPv4 and
 * IPv6, as published; "global" is the registry's Globally Reachable column, N/A where it has none),
 * rather than against the library's own tables: every block the registries do not mark globally
 * reachable is refused at its first, middle and last address, and the spellings that once got
 * through (documentation ranges, 6to4, IPv4-compatible, Teredo) are refused too.
 */
import { isPublicAddress } from '../../../lambda/alerts/address-rules';

/** [block, globally reachable] from iana-ipv4-special-registry. */
const IANA_IPV4: Array<[string, boolean | 'n/a']> = [
  ['0.0.0.0/8', false],
  ['10.0.0.0/8', false],
  ['100.64.0.0/10', false],
  ['127.0.0.0/8', false],
  ['169.254.0.0/16', false],
  ['172.16.0.0/12', false],
  ['192.0.0.0/24', false],
  ['192.0.0.0/29', false],
  ['192.0.0.8/32', false],
  ['192.0.0.9/32', true],
  ['192.0.0.10/32', true],
  ['192.0.0.170/32', false],
  ['192.0.0.171/32', false],
  ['192.0.2.0/24', false],
  ['192.31.196.0/24', true],
  ['192.52.193.0/24', true],
  ['192.88.99.0/24', 'n/a'],
  ['192.168.0.0/16', false],
  ['192.175.48.0/24', true],
  ['198.18.0.0/15', false],
  ['198.51.100.0/24', false],
  ['203.0.113.0/24', false],
  ['240.0.0.0/4', false],
  ['255.255.255.255/32', false],
];

/** [block, globally reachable] from iana-ipv6-special-registry. */
const IANA_IPV6: Array<[string, boolean | 'n/a']> = [
  ['::1/128', false],
  ['::/128', false],
  ['::ffff:0:0/96', false],
  ['64:ff9b::/96', true],
  ['64:ff9b:1::/48', false],
  ['100::/64', false],
  ['2001::/23', false],
  ['2001::/32', 'n/a'],
  ['2001:1::1/128', true],
  ['2001:1::2/128', true],
  ['2001:1::3/128', true],
  ['2001:2::/48', false],
  ['2001:3::/32', true],
  ['2001:4:112::/48', true],
  ['2001:10::/28', 'n/a'],
  ['2001:20::/28', true],
  ['2001:30::/28', true],
  ['2001:db8::/32', false],
  ['2002::/16', 'n/a'],
  ['2620:4f:8000::/48', true],
  ['3fff::/20', false],
  ['5f00::/16', false],
  ['fc00::/7', false],
  ['fe80::/10', false],
];

function v4Samples(block: string): string[] {
  const [base, bits] = block.split('/');
  const start = base.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
  const size = 2 ** (32 - Number(bits));
  const text = (n: number) => [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
  return [text(start), text(start + Math.floor(size / 2)), text(start + size - 1)];
}

function v6Samples(block: string): string[] {
  const [base, bits] = block.split('/');
  const halves = base.split('::');
  const groups = (part: string) => (part ? part.split(':').map((g) => BigInt(`0x${g}`)) : []);
  const head = groups(halves[0]);
  const tail = halves.length > 1 ? groups(halves[1]) : [];
  const all = [...head, ...Array<bigint>(8 - head.length - tail.length).fill(0n), ...tail];
  const start = all.reduce((n, g) => (n << 16n) | g, 0n);
  const size = 1n << BigInt(128 - Number(bits));
  const text = (n: bigint) =>
    Array.from({ length: 8 }, (_, i) => ((n >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(':');
  return [text(start), text(start + size / 2n), text(start + size - 1n)];
}

test.each(IANA_IPV4.filter(([, global]) => global !== true))(
  'IPv4 %s (globally reachable: %s) is refused at its first, middle and last address',
  (block) => {
    for (const address of v4Samples(block)) expect([address, isPublicAddress(address)]).toEqual([address, false]);
  },
);

test.each(IANA_IPV6.filter(([, global]) => global !== true))(
  'IPv6 %s (globally reachable: %s) is refused at its first, middle and last address',
  (block) => {
    for (const address of v6Samples(block)) expect([address, isPublicAddress(address)]).toEqual([address, false]);
  },
);

test.each([
  '192.0.2.2',
  '198.51.100.7',
  '203.0.113.9',
  '2001:db8::1',
  '[2001:db8::1]',
  '2002::1',
  '2002:c000:0202::1',
  '2001:0:4136:e378:8000:63bf:3fff:fdd2',
  '::192.0.2.2',
  '::8.8.8.8',
  '::127.0.0.1',
  '64:ff9b::10.0.0.1',
  '64:ff9b::8.8.8.8',
  '::ffff:192.0.2.2',
  '::ffff:c000:202',
  '::ffff:8.8.8.8',
  '0:0:0:0:0:ffff:7f00:1',
  '127.1',
  'fe80::1%eth0',
])('%s (the spellings that once reached this machine or a private network) is refused', (address) => {
  expect(isPublicAddress(address)).toBe(false);
});

test.each(['93.184.215.14', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450:4001:81c::200e'])(
  '%s, on the public internet, is allowed',
  (address) => {
    expect(isPublicAddress(address)).toBe(true);
  },
);
