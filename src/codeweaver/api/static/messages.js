/* messages.js: the conversation column (#messages): questions, clearing, the empty-state
 * hint and keeping the newest message in view. Answers are built by answer.js.
 */
import { addCopyButtons } from './code-copy.js';
import { $, el } from './dom.js';
import { renderQuestion } from './question.js';

/** Show the "ask a question" hint only while there is nothing in the conversation. */
export function updateEmptyState() {
  $('#empty-state').hidden = $('#messages').childElementCount > 0;
}

export function clearMessages() {
  $('#messages').replaceChildren();
  updateEmptyState();
}

/** Follow the answer as it grows, unless the reader scrolled up to read something. */
export function scrollToEnd(force) {
  const box = $('#conversation');
  const nearEnd = box.scrollHeight - box.scrollTop - box.clientHeight < 120;
  if (force || nearEnd) box.scrollTop = box.scrollHeight;
}

/** Add the user's question; `text` is untrusted: its code renders, all of it as text. */
export function appendQuestion(text) {
  const item = el('article', 'message question');
  const role = el('h3', 'message-role', 'you');
  const body = el('div', 'question-text');
  renderQuestion(body, text);
  addCopyButtons(body);
  item.append(role, body);
  $('#messages').append(item);
  updateEmptyState();
  return item;
}

/** A notice in place of the conversation (it could not be loaded); `key` is an i18n key. */
export function showNotice(key, vars) {
  const note = el('p', 'notice error', key, vars);
  note.setAttribute('role', 'alert');
  $('#messages').append(note);
  updateEmptyState();
}
