/**
 * The client's query string as sent, less every parameter that quotes one of `secrets` (the proxy
 * token as presented and its secret part): a token put in the query (`?key=`, as some SDKs do with
 * keys) stays with the proxy, like one in a header (SECURITY.md, "Tokens"). What is kept goes
 * upstream byte for byte.
 */
export function queryWithoutSecrets(rawQuery: string, secrets: ReadonlyArray<string | undefined>): string {
  const present = secrets.filter((secret): secret is string => typeof secret === 'string' && secret.length > 0);
  if (rawQuery === '' || present.length === 0) return rawQuery;
  return rawQuery
    .split('&')
    .filter((pair) => {
      const readable = percentDecoded(pair);
      return !present.some((secret) => pair.includes(secret) || readable.includes(secret));
    })
    .join('&');
}

/** Each valid escape decoded on its own, so one malformed escape can't hide the rest; `+` is a space. */
function percentDecoded(text: string): string {
  return text
    .replace(/\+/g, ' ')
    .replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
