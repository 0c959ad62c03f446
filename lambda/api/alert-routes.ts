import { randomBytes } from 'node:crypto';
import * as z from 'zod/mini';
import type { AlertWebhook, SentAlert } from '../alerts/ports';
import { webhookUrlProblem } from '../alerts/webhook-delivery';
import { NotFoundError, ValidationError } from '../base/errors';
import { jsonResponse } from '../http/response';
import { jsonBody, parseBody, plainText, strictBody } from './request-body';
import { API_PATHS } from './paths';
import type { ApiRoute } from './route-types';

const URL_ERROR = 'url must be an absolute https:// URL.';
const webhookBody = strictBody({ url: z.string({ error: URL_ERROR }).check(plainText('url')) }, '"url"');

/** How many alerts `GET /api/alerts` lists. */
const RECENT_ALERTS = 50;

/** The last four characters, so a person recognises a value without the API showing it. */
const lastFour = (text: string) => `…${text.slice(-4)}`;

/**
 * A webhook as `GET` shows it: the secret masked, and the URL's path and query too, since chat
 * services put their own credential there (docs/alerts.md).
 */
function maskedWebhook(webhook: AlertWebhook) {
  const url = new URL(webhook.url);
  const rest = webhook.url.slice(url.origin.length);
  return {
    url: rest.length > 1 ? `${url.origin}/${lastFour(rest)}` : url.origin,
    secret: `whsec_${lastFour(webhook.secret)}`,
    updated_at: webhook.updatedAt,
  };
}

/** An alert as `GET /api/alerts` lists it: its payload (docs/alerts.md), when it was sent and what became of it. */
export type SentAlertJson = ReturnType<typeof alertJson>;

const alertJson = (alert: SentAlert) => ({
  ...alert.payload,
  id: alert.id,
  sent_at: alert.sentAt,
  /** `pending` while deliveries are tried, `delivered`, or `failed` once the last attempt failed. */
  state: alert.state,
  deliveries: alert.deliveries,
});

/** The account's budget alerts (docs/alerts.md): its webhook, and the alerts it was sent. */
export const alertRoutes: ApiRoute[] = [
  {
    method: 'PUT',
    path: API_PATHS.alertWebhook,
    access: 'manage',
    async handle(call) {
      const { deps, caller } = call;
      const { url } = parseBody(jsonBody(call), webhookBody);
      const problem = webhookUrlProblem(url, { allowPrivate: deps.config.alertWebhookAllowPrivate });
      if (problem) throw new ValidationError(problem, 'url');
      // A new secret with every PUT: shown in this answer only.
      const secret = randomBytes(32).toString('base64url');
      const webhook = { url, secret, updatedAt: new Date(deps.now()).toISOString() };
      await deps.alerts.setWebhook(caller.accountId, webhook);
      return jsonResponse(200, { url, secret, updated_at: webhook.updatedAt });
    },
  },
  {
    method: 'GET',
    path: API_PATHS.alertWebhook,
    access: 'manage',
    async handle({ deps, caller }) {
      const webhook = await deps.alerts.webhook(caller.accountId);
      if (!webhook) throw new NotFoundError('This account has no alert webhook.');
      return jsonResponse(200, maskedWebhook(webhook));
    },
  },
  {
    method: 'DELETE',
    path: API_PATHS.alertWebhook,
    access: 'manage',
    async handle({ deps, caller }) {
      if (!(await deps.alerts.removeWebhook(caller.accountId)))
        throw new NotFoundError('This account has no alert webhook.');
      return { statusCode: 204, headers: {}, body: '' };
    },
  },
  {
    method: 'GET',
    path: API_PATHS.alerts,
    access: 'manage',
    async handle({ deps, caller }) {
      const alerts = await deps.alerts.recent(caller.accountId, RECENT_ALERTS);
      return jsonResponse(200, { alerts: alerts.map(alertJson) });
    },
  },
];
