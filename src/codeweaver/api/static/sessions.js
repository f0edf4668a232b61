/* sessions.js: the conversation list in the sidebar (load, open, delete after a confirm) and
 * switching the page to a saved conversation or a new one.
 *
 * Titles come from user questions: textContent only. The saved answers' html goes
 * through answer.js like a streamed answer's does.
 */
import { ApiError, api, describe } from './api.js';
import { createAnswer, finishAnswer } from './answer.js';
import { $, button, el, icon } from './dom.js';
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

/** A title for the list: the first question on one line, its fenced code left out (a
 * question that is only code keeps the code, without its fence marks). */
function listTitle(title) {
  const text = String(title || '');
  const flat = (t) => t.replace(/\s+/g, ' ').trim();
  return (
    flat(text.replace(/(`{3,}|~{3,})[\s\S]*?(?:\1|$)/g, ' ')) ||
    flat(text.replace(/(`{3,}|~{3,})[\w+#.-]*/g, ' '))
  );
}

function sessionItem(session) {
  const item = el('li', 'session-item');
  item.dataset.sessionId = session.id;
  const title = listTitle(session.title);
  const named = title || '…';

  const row = el('div', 'session-row');
  const open = button('session-open');
  const name = el('span', 'session-title');
  name.dir = 'auto';
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

  const remove = button('session-delete');
  remove.append(trashIcon());
  setAttrText(remove, 'aria-label', 'deleteConversationLabel', { title: named });
  setAttrText(remove, 'title', 'deleteConversation');
  remove.addEventListener('click', () => askToDelete(item, session.id, named));

  row.append(open, remove);
  item.append(row);
  return item;
}

/**
 * The first step of a delete: the row turns into "Delete this conversation? [Delete]
 * [Cancel]", with focus on Cancel. The question takes the row's first line, so the second
 * click of a double click lands on text, and Enter pressed twice cancels.
 */
function askToDelete(item, id, title) {
  for (const other of document.querySelectorAll('#session-list .session-confirm')) {
    if (!item.contains(other)) other.dispatchEvent(new Event('cancel'));
  }
  if ($('.session-confirm', item)) return;
  const row = $('.session-row', item);
  const confirm = el('div', 'session-confirm');
  confirm.setAttribute('role', 'group');
  setAttrText(confirm, 'aria-label', 'deleteConversationLabel', { title });
  const text = el('p', 'session-confirm-text');
  const named = el('strong', 'session-title');
  named.dir = 'auto';
  named.textContent = title;
  text.append(named, setText(el('span'), 'confirmDeleteText'));
  const yes = button('session-confirm-yes danger', 'confirmDelete');
  const no = button('session-confirm-no', 'cancel');
  const buttons = el('div', 'session-confirm-buttons');
  buttons.append(yes, no);
  confirm.append(text, buttons);
  row.hidden = true;
  item.append(confirm);
  no.focus();

  let busy = false;
  const cancel = (refocus) => {
    if (busy) return;
    confirm.remove();
    row.hidden = false;
    if (refocus) $('.session-delete', item).focus();
  };
  // A click on the question (the second half of a double click) keeps focus on Cancel.
  confirm.addEventListener('mousedown', (event) => {
    if (!event.target.closest('button')) event.preventDefault();
  });
  no.addEventListener('click', () => cancel(true));
  confirm.addEventListener('cancel', () => cancel(false));
  confirm.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    event.stopPropagation(); // Escape closes this question, not the sidebar panel
    cancel(true);
  });
  yes.addEventListener('click', async () => {
    busy = true;
    yes.disabled = no.disabled = true;
    try {
      await api('/api/sessions/' + encodeURIComponent(id), { method: 'DELETE' });
    } catch (err) {
      busy = false;
      yes.disabled = no.disabled = false;
      setText($('#session-status'), 'deleteFailed', { detail: describe(err) });
      return;
    }
    if (state.sessionId === id) newConversation();
    await refreshSessions();
  });
}

/** A trash-can icon. */
function trashIcon() {
  return icon('M3 6h18M8 6V4h8v2m2 0-1 14H7L6 6m4 5v6m4-6v6');
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
