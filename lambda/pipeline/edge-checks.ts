import { TOKEN_PREFIX } from '../auth/proxy-token';
import { AuthenticationError, ValidationError } from '../base/errors';
import type { IncomingRequest } from '../http/request';
import { OTHER_LABEL } from '../usage/rollups/summary';
import { isSendableCredential, unsafeCharacterIn } from '../base/plain-text';
import { credentialHeaderValues } from './request-secrets';
import type { ProxyRequest } from './state';

/** What a header value holds where its bytes were no UTF-8 (the local server and Lambda both decode them so). */
const NOT_UTF8 = '\ufffd';

/**
 * Bad input refused before anything is read from or written to the store (SECURITY.md, "Hostile
 * input"), in the endpoint's own error shape: a header that is no UTF-8, two different proxy tokens,
 * a caller's key no header can carry upstream, and a model or requester label holding control or
 * bidirectional characters (they would reach rows, the CSV export and the dashboard as they are) or
 * naming the stats' `(other)` entry (it would be counted with the values past a day's cap).
 */
export function refuseAtTheEdge(incoming: IncomingRequest, request: ProxyRequest): void {
  for (const [name, value] of Object.entries(incoming.headers))
    if (value?.includes(NOT_UTF8)) throw new ValidationError(`Header ${name.slice(0, 60)} is not valid UTF-8.`, name);

  const credentials = credentialHeaderValues(incoming.headers);
  const tokens = new Set(credentials.map(({ bare }) => bare).filter((bare) => bare.startsWith(TOKEN_PREFIX)));
  if (tokens.size > 1)
    throw new AuthenticationError(
      `Conflicting credentials: this request carries ${tokens.size} different proxy tokens (in ${credentials.map(({ name }) => name).join(', ')}); send exactly one.`,
    );
  if (request.mode === 'pass-through' && request.credential && !isSendableCredential(request.credential))
    throw new AuthenticationError(
      'Invalid credential: a provider key holds only visible ASCII characters (no spaces, line breaks or non-ASCII characters).',
    );

  const requesterProblem = request.requester && unsafeCharacterIn(request.requester);
  if (requesterProblem)
    throw new ValidationError(
      `x-proxy-user: the requester label holds ${requesterProblem}, a control or bidirectional character; send plain text.`,
      'x-proxy-user',
    );
  if (request.requester === OTHER_LABEL)
    throw new ValidationError(
      `x-proxy-user: the label ${OTHER_LABEL} is reserved (the stats count labels past a day's cap under it); choose another.`,
      'x-proxy-user',
    );
  const model = request.body?.model;
  if (model === OTHER_LABEL)
    throw new ValidationError(
      `model: ${OTHER_LABEL} is no model id (the stats reserve it for models past a day's cap).`,
      'model',
    );
  const modelProblem = typeof model === 'string' && unsafeCharacterIn(model);
  if (modelProblem)
    throw new ValidationError(
      `model: the model id holds ${modelProblem}, a control or bidirectional character; model ids are plain text.`,
      'model',
    );
}
