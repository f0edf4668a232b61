/* answer.js: one answer block: created empty, filled with the run's progress and the
 * streamed text while the run goes on, then swapped for the finished answer (or an error).
 *
 * The run's steps show as the server's progress lines ("Searching installed docs…"): the
 * latest one is the status line, all of them the step list. The raw steps (internal node
 * names) are kept for debugging in a closed list inside it.
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
  const stepList = el('ol', 'progress-list');
  const raw = el('details', 'raw-steps');
  raw.hidden = true;
  const rawSummary = el('summary', 'raw-summary');
  const rawList = el('ol', 'step-list');
  raw.append(rawSummary, rawList);
  steps.append(summary, stepList, raw);

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
  return {
    root, steps, summary, stepList, raw, rawSummary, rawList, status, body, stream, error,
    sources, actions, phase: '',
  };
}

/** Show `text` (untrusted: the server's words) as the answer's status line. */
function setStatus(answer, text) {
  delete answer.status.dataset.i18n;
  delete answer.status.dataset.i18nVars;
  answer.status.textContent = text;
}

/** Add one progress line ({phase, text}); it is also the new status line. */
export function addProgress(answer, line) {
  const text = String(line.text ?? '');
  if (!text) return;
  const phase = String(line.phase ?? '');
  const item = el('li', 'progress-line');
  // The phase only picks a style; an unknown one is just a line.
  if (/^[a-z_]{1,20}$/.test(phase)) item.dataset.phase = phase;
  item.textContent = text;
  answer.stepList.append(item);
  answer.steps.hidden = false;
  answer.phase = phase;
  setText(answer.summary, 'stepsCount', { n: answer.stepList.childElementCount });
  if (answer.root.dataset.state === 'streaming') setStatus(answer, text);
}

/** The answer's text started streaming: say so unless a progress line already does. */
export function markWriting(answer) {
  if (answer.phase !== 'write' && answer.status.dataset.i18n !== 'writing') {
    setText(answer.status, 'writing');
  }
}

/** Keep one raw step of the run (`kind`: think, act or observe) for debugging. */
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
  answer.rawList.append(item);
  answer.raw.hidden = false;
  setText(answer.rawSummary, 'rawSteps', { n: answer.rawList.childElementCount });
}

/** Swap the streamed text for the server's sanitised HTML and add sources and actions. */
export function finishAnswer(answer, done) {
  setAnswerHtml(answer.body, done.html);
  addCopyButtons(answer.body);
  // The lines normally streamed in already; `done` repeats them for a client that missed
  // them.
  if (!answer.stepList.childElementCount && Array.isArray(done.progress)) {
    for (const line of done.progress) addProgress(answer, line);
  }
  renderSources(answer, done.sources || []);
  renderFeedback(answer, done.session_id, done.turn);
  answer.status.textContent = '';
  delete answer.status.dataset.i18n;
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
