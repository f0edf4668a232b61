/* answer.js: one answer block: created empty, filled with steps and streamed text while
 * the run goes on, then swapped for the finished answer (or an error).
 *
 * Security rule: streamed text, steps and error messages go in with textContent. The one
 * exception is the finished answer's `html`, sanitised by the server; `setAnswerHtml`
 * below is the only innerHTML assignment of the whole page.
 */
import { addCopyButtons } from './code-copy.js';
import { $, button, el } from './dom.js';
import { renderFeedback } from './feedback.js';
import { setText } from './i18n.js';
import { updateEmptyState } from './messages.js';
import { renderSources } from './sources.js';

/** An empty answer block; its parts are filled by the stream or from the history. */
export function createAnswer() {
  const root = el('article', 'message answer');
  root.dataset.state = 'streaming';
  const role = el('h3', 'message-role', 'assistant');

  const steps = el('details', 'steps');
  steps.hidden = true;
  const summary = el('summary', 'steps-summary', 'steps');
  const stepList = el('ol', 'step-list');
  steps.append(summary, stepList);

  const status = el('p', 'answer-status muted');
  status.setAttribute('role', 'status');
  const body = el('div', 'answer-body');
  const stream = el('div', 'answer-stream');
  body.append(stream);
  const error = el('div', 'answer-error');
  error.hidden = true;
  const sources = el('section', 'sources');
  sources.hidden = true;
  const actions = el('div', 'answer-actions');
  actions.hidden = true;

  root.append(role, steps, status, body, error, sources, actions);
  $('#messages').append(root);
  updateEmptyState();
  return { root, steps, summary, stepList, status, body, stream, error, sources, actions };
}

/** Add one step of the run (`kind`: think, act or observe); its texts go in as text. */
export function addStep(answer, kind, data) {
  const failed = Boolean(data.error);
  const item = el('li', 'step step-' + kind + (failed ? ' step-error' : ''));
  const label = el('span', 'step-kind', failed ? 'stepError' : kind);
  const node = el('span', 'step-node');
  node.textContent = String(data.node || '');
  const text = el('span', 'step-text');
  // The API sends the step's text as `message` (older builds: `text`).
  text.textContent = String(data.text ?? data.message ?? '');
  item.append(label, node, text);
  answer.stepList.append(item);
  answer.steps.hidden = false;
  // Opened once, as the run starts; a reader who closes it keeps it closed.
  if (answer.stepList.childElementCount === 1 && answer.root.dataset.state === 'streaming') {
    answer.steps.open = true;
  }
  setText(answer.summary, 'stepsCount', { n: answer.stepList.childElementCount });
}

/** Swap the streamed text for the server's sanitised HTML and add sources and actions. */
export function finishAnswer(answer, done) {
  setAnswerHtml(answer.body, done.html);
  addCopyButtons(answer.body);
  renderSources(answer, done.sources || []);
  renderFeedback(answer, done.session_id, done.turn);
  answer.status.textContent = '';
  delete answer.status.dataset.i18n;
  answer.steps.open = false;
  answer.root.dataset.turn = String(done.turn);
  answer.root.dataset.state = 'done';
}

/**
 * The only innerHTML assignment of the page: keep it the only one. `html` is the server's
 * rendering of the answer: markdown-it with raw HTML disabled, then nh3 with an
 * allow-list of tags. Nothing else may be passed here.
 */
function setAnswerHtml(container, html) {
  container.innerHTML = typeof html === 'string' ? html : '';
}

/** Show why the answer failed: `message` is the server's text or {key, vars} of ours. */
export function failAnswer(answer, message, retry) {
  answer.root.dataset.state = 'error';
  answer.status.textContent = '';
  delete answer.status.dataset.i18n;
  answer.error.hidden = false;
  answer.error.setAttribute('role', 'alert');
  const text = el('p', 'error-text');
  if (typeof message === 'string') text.textContent = message;
  else setText(text, message.key, message.vars);
  answer.error.replaceChildren(text);
  if (retry) {
    const again = button('retry', 'retry');
    again.addEventListener('click', retry);
    answer.error.append(again);
  }
}
