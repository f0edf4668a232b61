/* api.js: calls to the CodeWeaver HTTP API: fetch() with the bearer token, the server's
 * error text as ApiError, and the token form a 401 opens.
 *
 * Error details come from the server and are only ever shown with textContent.
 */
import { $ } from './dom.js';
import { t } from './i18n.js';
import { STORE, storage } from './storage.js';

/** A failed request: `status` is the HTTP status, 0 when the server was not reached. */
export class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
    this.detail = detail;
  }
}

/** The readable text of an error body: FastAPI's `detail` is a string or a list. */
async function errorDetail(response) {
  try {
    const body = await response.json();
    const detail = body && body.detail;
    if (typeof detail === 'string') return detail;
    if (Array.isArray(detail)) {
      return detail.map((d) => (d && d.msg ? String(d.msg) : JSON.stringify(d))).join('; ');
    }
    if (detail !== undefined) return JSON.stringify(detail);
  } catch { /* not JSON */ }
  return response.statusText || String(response.status);
}

/**
 * fetch() with the bearer token; a non-2xx answer throws ApiError with the server's
 * detail. A 401 also opens the token form; `retry` runs again once a token is saved.
 */
export async function api(path, options = {}, retry = null) {
  const headers = new Headers(options.headers || {});
  const token = storage.get(STORE.token);
  if (token) headers.set('Authorization', 'Bearer ' + token);
  if (options.body !== undefined) headers.set('Content-Type', 'application/json');
  let response;
  try {
    response = await fetch(path, { ...options, headers, cache: 'no-store' });
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new ApiError(0, String(err && err.message ? err.message : err));
  }
  if (response.ok) return response;
  const detail = await errorDetail(response);
  if (response.status === 401) askForToken(retry);
  throw new ApiError(response.status, detail);
}

/** What went wrong, as a translatable message: {key, vars}. */
export function explain(err) {
  if (err instanceof ApiError) {
    return err.status
      ? { key: 'httpError', vars: { status: err.status, detail: err.detail } }
      : { key: 'networkError', vars: { detail: err.detail } };
  }
  const detail = String(err && err.message ? err.message : err);
  return { key: 'networkError', vars: { detail } };
}

/** What went wrong, as text in the current language. */
export function describe(err) {
  const { key, vars } = explain(err);
  return t(key, vars);
}

// ---------------------------------------------------------------- token form

const pendingAfterToken = new Set();

function askForToken(retry) {
  if (retry) pendingAfterToken.add(retry);
  const form = $('#token-form');
  if (form.hidden) {
    form.hidden = false;
    $('#token-input').focus();
  }
}

/** Submit of the token form: keep the token and rerun the calls that a 401 stopped. */
export function onTokenSubmit(event) {
  event.preventDefault();
  const value = $('#token-input').value.trim();
  if (!value) return;
  storage.set(STORE.token, value);
  $('#token-input').value = '';
  $('#token-form').hidden = true;
  const retries = [...pendingAfterToken];
  pendingAfterToken.clear();
  for (const retry of retries) retry();
}
