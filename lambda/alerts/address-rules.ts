import ipaddr from 'ipaddr.js';

/**
 * Addresses a webhook may reach (docs/alerts.md, "Webhook safety"): the public internet only, the
 * complement of the IANA special-purpose registries. The ranges come from ipaddr.js, a maintained
 * library that names them (its `range()` is `unicast` only outside every special-purpose block);
 * test/unit/alerts/address-rules.test.ts checks them against the registries themselves.
 *
 * IPv6 must also lie in 2000::/3, the only block IANA allocates for global unicast: everything
 * below it is refused with the rest, IPv4 written inside IPv6 included (IPv4-mapped `::ffff:a.b.c.d`,
 * IPv4-compatible `::a.b.c.d`, which ipaddr.js reads as mapped, and NAT64's `64:ff9b::/96`, which a
 * translator may route to a private IPv4). A public IPv4 is reached by its own spelling.
 */
const globalUnicastV6 = ipaddr.IPv6.parseCIDR('2000::/3');

/** Whether a webhook may connect to this address (an IP literal); anything unparsable is refused. */
export function isPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!ipaddr.isValid(bare)) return false;
  const parsed = ipaddr.parse(bare);
  if (parsed.kind() === 'ipv4') return parsed.range() === 'unicast';
  return parsed.match(globalUnicastV6) && parsed.range() === 'unicast';
}
