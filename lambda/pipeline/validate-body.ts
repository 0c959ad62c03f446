import { cacheHeaderProblem } from '../cache/cache-request';
import { UnsupportedMediaTypeError, ValidationError } from '../base/errors';
import { joinTags, TAG_HEADER, type Tags } from '../tags/tags';
import type { Authenticated, Routed, Validated } from './state';
import type { Step } from './step';

/** The row's tags: `x-proxy-tags` well formed, and naming no key the token sets itself (docs/tags.md). */
function rowTags(state: Routed & Authenticated): Tags {
  if (!state.requestTags.ok) throw new ValidationError(state.requestTags.message, TAG_HEADER);
  const joined = joinTags(state.gate.record.tags, state.requestTags.tags);
  if ('conflict' in joined) {
    throw new ValidationError(
      `${TAG_HEADER}: tag "${joined.conflict}" is set by this proxy token and a request cannot override it.`,
      TAG_HEADER,
    );
  }
  return joined.tags;
}

/** Step 5: the content type, the body fields the endpoint requires, and the proxy's own request headers. */
export function validateBody(): Step<Routed & Authenticated, Validated> {
  return {
    name: 'validate',
    run(state) {
      const { dialect } = state.endpoint;
      // Content-type application/json (docs/errors-and-limits.md, "Content type"). A missing header is read as JSON, and so are
      // curl's default form type (`curl -d '{…}'`) and a type the API's own SDK labels JSON with (the dialect's `jsonLabels`),
      // when the body is a JSON object; another type is refused.
      const contentType = state.request.headers['content-type'];
      const label = contentType?.trim() ?? '';
      const curlDefault =
        contentType !== undefined &&
        (/^application\/x-www-form-urlencoded\b/i.test(label) || dialect.jsonLabels?.test(label) === true) &&
        state.body !== undefined;
      if (
        dialect.requestBody === 'json' &&
        contentType &&
        !curlDefault &&
        !/^application\/([\w.+-]+\+)?json\b/i.test(contentType.trim())
      )
        throw new UnsupportedMediaTypeError(contentType);
      const { bodyCheck } = state;
      if (!bodyCheck.ok) throw new ValidationError(bodyCheck.message, bodyCheck.param || undefined);
      const cacheProblem = cacheHeaderProblem(state.cache);
      if (cacheProblem) throw new ValidationError(cacheProblem.message, cacheProblem.param);
      return { validated: true, tags: rowTags(state) };
    },
  };
}
