/* app.js: the entry point of the CodeWeaver web page: wires the page's controls to the
 * modules below and loads the conversation list (and the conversation in the URL).
 *
 * Plain ES2020 modules, no framework, no build: index.html loads this file with
 * <script type="module">, and each module imports what it uses. The page is served with a
 * strict Content-Security-Policy, so nothing here uses inline handlers, inline styles or
 * eval.
 *
 * Security rule: every string that comes from a user, a model or the web is put into the
 * page with textContent. The one exception is the `html` of an answer, which the server
 * renders with raw HTML disabled and then sanitises (nh3); it is the only value ever
 * assigned to innerHTML (see `setAnswerHtml` in answer.js).
 *
 * Modules (each does one job):
 *   storage.js    localStorage that fails quietly
 *   i18n.js       interface strings, language choice, translated text on elements
 *   dom.js        element lookup and creation
 *   api.js        fetch() with the bearer token, API errors, the token form
 *   sse.js        Server-Sent Events parser for a fetch() body
 *   state.js      the open conversation and the running stream
 *   messages.js   the conversation column: questions, empty state, scrolling
 *   answer.js     one answer block: steps, streamed text, finished html, errors
 *   sources.js    numbered sources and citation links
 *   code-copy.js  copy buttons on code blocks
 *   feedback.js   thumbs up / down
 *   sessions.js   conversation list: load, open, delete, new
 *   chat.js       asking: the ask form and the streamed answer
 *   layout.js     the sidebar panel on narrow screens
 */
import { onTokenSubmit } from './api.js';
import { onAskSubmit, onQuestionKey } from './chat.js';
import { $ } from './dom.js';
import { applyLanguage, setText, toggleLanguage } from './i18n.js';
import { closeSidebarOnPhone, toggleSidebar } from './layout.js';
import { updateEmptyState } from './messages.js';
import { newConversation, openSession, refreshSessions } from './sessions.js';
import { onCitationClick } from './sources.js';
import { sessionFromHash, state, stopStreaming } from './state.js';

function start() {
  applyLanguage();
  $('#lang-toggle').addEventListener('click', toggleLanguage);
  $('#sidebar-toggle').addEventListener('click', toggleSidebar);
  $('#new-session').addEventListener('click', () => {
    closeSidebarOnPhone();
    newConversation();
  });
  $('#token-form').addEventListener('submit', onTokenSubmit);
  $('#ask-form').addEventListener('submit', onAskSubmit);
  $('#question').addEventListener('keydown', onQuestionKey);
  $('#stop').addEventListener('click', stopStreaming);
  $('#messages').addEventListener('click', onCitationClick);
  document.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') closeSidebarOnPhone();
  });
  window.addEventListener('hashchange', () => {
    const id = sessionFromHash();
    if (id && id !== state.sessionId) openSession(id);
    else if (!id && state.sessionId) newConversation();
  });

  setText($('#session-status'), 'loadingConversations');
  refreshSessions();
  const id = sessionFromHash();
  if (id) openSession(id);
  updateEmptyState();
}

start();
