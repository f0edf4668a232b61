/* state.js: what the page is showing: the open conversation and the answer being
 * streamed, and the conversation id in the URL hash.
 */

/** The shape of a session id; anything else in the URL is ignored. */
export const SESSION_ID = /^[A-Za-z0-9_-]{1,64}$/;

export const state = {
  sessionId: null, // the conversation on screen; null for a new one
  controller: null, // AbortController of the answer being streamed
  loadToken: 0, // drops a session load that a later click overtook
};

/** The session id in the URL (`#session=<id>`), or null. */
export function sessionFromHash() {
  const match = /^#session=([A-Za-z0-9_-]{1,64})$/.exec(window.location.hash);
  return match ? match[1] : null;
}

/** Stop the answer being streamed, if any. */
export function stopStreaming() {
  if (state.controller) state.controller.abort();
  state.controller = null;
}
