/* sessions.js: the conversation list in the sidebar (load, open, two-click delete) and
 * switching the page to a saved conversation or a new one.
 *
 * Titles come from user questions: textContent only. The saved answers' html goes
 * through answer.js like a streamed answer's does.
 */
import { ApiError, api, describe } from './api.js';
import { createAnswer, finishAnswer } from './answer.js';
import { $, button, el } from './dom.js';
import { formatTime, setAttrText, setText } from './i18n.js';
import { closeSidebarOnPhone } from './layout.js';
import {
  appendQuestion, clearMessages, scrollToEnd, showNotice, updateEmptyState,
} from './messages.js';
import { SESSION_ID, state, stopStreaming } from './state.js';

/** Keep the open conversation in the URL, so a reload (or a shared link) reopens it. */
export function rememberSession(id) {
  state.sessionId = id;
  const hash = id ? '#session=' + id : '';
  if (window.location.hash !== hash) {
    // replaceState does not fire hashchange, so this does not reload the session.
    history.replaceState(null, '', window.location.pathname + window.location.search + hash);
  }
  markActiveSession();
}

// ---------------------------------------------------------------- session list

/** Reload the list from the API (again after a token is saved, if it was missing). */
export async function refreshSessions() {
  const status = $('#session-status');
  let sessions;
  try {
    const response = await api('/api/sessions', {}, refreshSessions);
    sessions = await response.json();
  } catch (err) {
    setText(status, 'listFailed', { detail: describe(err) });
    return;
  }
  const list = $('#session-list');
  list.replaceChildren();
  if (!Array.isArray(sessions) || sessions.length === 0) {
    setText(status, 'noConversations');
    return;
  }
  status.textContent = '';
  delete status.dataset.i18n;
  for (const session of sessions) list.append(sessionItem(session));
  markActiveSession();
}

function sessionItem(session) {
  const item = el('li', 'session-item');
  item.dataset.sessionId = session.id;
  const title = session.title || '';

  const open = button('session-open');
  const name = el('span', 'session-title');
  if (title) name.textContent = title;
  else setText(name, 'untitled');
  const meta = el('span', 'session-meta');
  const when = el('time');
  when.dataset.epoch = String(session.updated);
  when.textContent = formatTime(Number(session.updated));
  meta.append(when, ' · ', setText(el('span'), 'messageCount', { n: session.messages }));
  open.append(name, meta);
  open.addEventListener('click', () => {
    closeSidebarOnPhone();
    openSession(session.id);
  });

  const remove = button('session-delete', 'deleteConversation');
  setAttrText(remove, 'aria-label', 'deleteConversationLabel', { title: title || '…' });
  remove.addEventListener('click', () => onDeleteClick(remove, session.id, title || '…'));

  item.append(open, remove);
  return item;
}

// One disarm timer per button: arming another button must not leave this one armed.
const disarmTimers = new WeakMap();

function disarm(btn, title) {
  clearTimeout(disarmTimers.get(btn));
  btn.dataset.armed = 'false';
  setText(btn, 'deleteConversation');
  setAttrText(btn, 'aria-label', 'deleteConversationLabel', { title });
}

/** Delete takes two clicks (no confirm() dialog): the first one arms the button. */
async function onDeleteClick(btn, id, title) {
  if (btn.dataset.armed !== 'true') {
    btn.dataset.armed = 'true';
    setText(btn, 'confirmDelete');
    setAttrText(btn, 'aria-label', 'confirmDeleteLabel', { title });
    clearTimeout(disarmTimers.get(btn));
    disarmTimers.set(btn, setTimeout(() => disarm(btn, title), 4000));
    return;
  }
  clearTimeout(disarmTimers.get(btn));
  btn.disabled = true;
  try {
    await api('/api/sessions/' + encodeURIComponent(id), { method: 'DELETE' });
  } catch (err) {
    btn.disabled = false;
    setText($('#session-status'), 'deleteFailed', { detail: describe(err) });
    return;
  }
  if (state.sessionId === id) newConversation();
  await refreshSessions();
}

function markActiveSession() {
  for (const item of document.querySelectorAll('#session-list .session-item')) {
    const open = $('.session-open', item);
    if (item.dataset.sessionId === state.sessionId) open.setAttribute('aria-current', 'true');
    else open.removeAttribute('aria-current');
  }
}

// ---------------------------------------------------------------- open / new

/** An empty page for a new conversation (the next question starts one). */
export function newConversation() {
  stopStreaming();
  state.loadToken += 1;
  rememberSession(null);
  clearMessages();
  $('#question').focus();
}

/** Show saved conversation `id`: its questions and finished answers. */
export async function openSession(id) {
  if (!SESSION_ID.test(id)) return;
  stopStreaming();
  const token = ++state.loadToken;
  let session;
  try {
    const response = await api(
      '/api/sessions/' + encodeURIComponent(id),
      {},
      () => openSession(id),
    );
    session = await response.json();
  } catch (err) {
    if (token !== state.loadToken) return;
    clearMessages();
    if (err instanceof ApiError && err.status === 404) rememberSession(null);
    showNotice('loadFailed', { detail: describe(err) });
    return;
  }
  if (token !== state.loadToken) return;
  rememberSession(session.id);
  clearMessages();
  for (const message of session.history || []) {
    if (message.role === 'user') {
      appendQuestion(message.content);
    } else if (message.role === 'assistant') {
      const answer = createAnswer();
      answer.root.dataset.turn = String(message.turn);
      finishAnswer(answer, {
        session_id: session.id,
        turn: message.turn,
        html: message.html,
        sources: message.sources,
      });
    }
  }
  updateEmptyState();
  scrollToEnd(true);
}
