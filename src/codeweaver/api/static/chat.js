/* chat.js: asking a question: the ask form, the streamed run of one answer (POST
 * /api/chat/stream read as Server-Sent Events) and what each event does to the page:
 * `progress` lines are the steps people read, raw `think`/`act`/`observe` steps are kept
 * only in the answer's debugging list.
 *
 * Streamed text is untrusted: it goes into the answer as text nodes, never as HTML.
 */
import { ApiError, api, explain } from './api.js';
import {
  addProgress, addStep, createAnswer, failAnswer, finishAnswer, markWriting,
} from './answer.js';
import { $ } from './dom.js';
import { setText } from './i18n.js';
import { appendQuestion, scrollToEnd } from './messages.js';
import { refreshSessions, rememberSession } from './sessions.js';
import { readEvents } from './sse.js';
import { state } from './state.js';

function setBusy(busy) {
  $('#send').disabled = busy;
  $('#stop').hidden = !busy;
  $('#conversation').setAttribute('aria-busy', busy ? 'true' : 'false');
}

/** Ask `question` in the open conversation (or a new one) and stream the answer. */
async function ask(question) {
  if (state.controller) return;
  const controller = new AbortController();
  state.controller = controller;
  state.loadToken += 1; // a session still loading must not replace this conversation
  setBusy(true);
  const asked = appendQuestion(question);
  const answer = createAnswer();
  setText(answer.status, 'starting');
  scrollToEnd(true);

  // Both modes continue the same conversation; the choice applies to this question.
  const payload = { message: question, mode: $('#mode').value || 'pipeline' };
  if (state.sessionId) payload.session_id = state.sessionId;
  const retry = () => {
    if (state.controller) return; // another answer is streaming; keep this one as is
    asked.remove();
    answer.root.remove();
    ask(question);
  };
  let finished = false;
  try {
    const response = await api(
      '/api/chat/stream',
      {
        method: 'POST',
        body: JSON.stringify(payload),
        headers: { Accept: 'text/event-stream' },
        signal: controller.signal,
      },
      retry,
    );
    await readEvents(response.body, (name, raw) => {
      let data;
      try { data = JSON.parse(raw); } catch { return; }
      finished = onStreamEvent(answer, name, data, retry) || finished;
    });
    if (!finished) failAnswer(answer, { key: 'streamEnded' }, retry);
  } catch (err) {
    if (err && err.name === 'AbortError') {
      if (!finished) failAnswer(answer, { key: 'stopped' }, retry);
    } else if (err instanceof ApiError && err.status === 401) {
      // The token form is open; the question runs again once a token is saved.
      failAnswer(answer, { key: 'tokenNeeded' }, null);
    } else {
      const retryable = !(err instanceof ApiError) || [0, 429, 503].includes(err.status);
      failAnswer(answer, explain(err), retryable ? retry : null);
    }
  } finally {
    if (state.controller === controller) state.controller = null;
    setBusy(state.controller !== null); // a newer answer may already be streaming
  }
}

/** Apply one stream event to `answer`; true once the answer is finished (done/error). */
function onStreamEvent(answer, name, data, retry) {
  switch (name) {
    case 'queue':
      setText(answer.status, 'waiting', { n: data.position });
      return false;
    case 'progress':
      addProgress(answer, data);
      scrollToEnd(false);
      return false;
    case 'think':
    case 'act':
    case 'observe':
      addStep(answer, name, data);
      // The grounding check sent the draft back: the next attempt streams afresh.
      if (data.data && data.data.retry) answer.stream.replaceChildren();
      return false;
    case 'token':
      markWriting(answer);
      // Text node: the streamed text is untrusted and must never be parsed as HTML.
      answer.stream.append(document.createTextNode(String(data.text ?? '')));
      scrollToEnd(false);
      return false;
    case 'done':
      finishAnswer(answer, data);
      if (data.session_id) rememberSession(data.session_id);
      refreshSessions();
      scrollToEnd(false);
      return true;
    case 'error':
      failAnswer(answer, String(data.message ?? ''), data.retryable ? retry : null);
      return true;
    default:
      return false; // an event this page does not know yet
  }
}

/** Submit of the ask form: send the question unless an answer is still streaming. */
export function onAskSubmit(event) {
  event.preventDefault();
  const box = $('#question');
  const question = box.value.trim();
  if (!question || state.controller) return;
  box.value = '';
  ask(question);
}

/** Keydown in the question box. */
export function onQuestionKey(event) {
  // Enter sends; Shift+Enter is a new line. While an IME is composing (Korean),
  // Enter confirms the syllable and must not send.
  if (event.key !== 'Enter' || event.shiftKey || event.isComposing || event.keyCode === 229) {
    return;
  }
  event.preventDefault();
  $('#ask-form').requestSubmit();
}
