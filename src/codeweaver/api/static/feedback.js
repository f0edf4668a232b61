/* feedback.js: the thumbs up / thumbs down buttons under a finished answer, which send
 * the rating to the API (a thumbs down also drops the answer from the answer cache).
 */
import { api, describe } from './api.js';
import { button, el, icon } from './dom.js';
import { setAttrText, setText } from './i18n.js';

/** The rating buttons of answer `turn` in session `sessionId` (none without both). */
export function renderFeedback(answer, sessionId, turn) {
  const actions = answer.actions;
  actions.replaceChildren();
  if (!sessionId || !Number.isInteger(turn)) return;
  actions.hidden = false;
  const up = button('feedback feedback-up');
  const down = button('feedback feedback-down');
  up.append(thumbIcon(false));
  down.append(thumbIcon(true));
  setAttrText(up, 'aria-label', 'helpful');
  setAttrText(down, 'aria-label', 'notHelpful');
  setAttrText(up, 'title', 'helpful');
  setAttrText(down, 'title', 'notHelpful');
  up.setAttribute('aria-pressed', 'false');
  down.setAttribute('aria-pressed', 'false');
  const note = el('span', 'feedback-note muted');
  note.setAttribute('role', 'status');
  const send = async (rating, pressed, other) => {
    up.disabled = down.disabled = true;
    try {
      const response = await api('/api/feedback', {
        method: 'POST',
        body: JSON.stringify({ session_id: sessionId, turn, rating }),
      });
      const result = await response.json();
      pressed.setAttribute('aria-pressed', 'true');
      other.setAttribute('aria-pressed', 'false');
      setText(note, result.cache_removed ? 'feedbackRemoved' : 'feedbackThanks');
    } catch (err) {
      setText(note, 'feedbackFailed', { detail: describe(err) });
    } finally {
      up.disabled = down.disabled = false;
    }
  };
  up.addEventListener('click', () => send('up', up, down));
  down.addEventListener('click', () => send('down', down, up));
  actions.append(up, down, note);
}

const THUMB =
  'M7 22H4a2 2 0 0 1-2-2v-7a2 2 0 0 1 2-2h3m0 11V11l4-9a3 3 0 0 1 3 3v4h5.7' +
  'a2 2 0 0 1 2 2.3l-1.4 9a2 2 0 0 1-2 1.7z';

/** A thumb icon; thumbs-down is thumbs-up mirrored top to bottom. */
function thumbIcon(down) {
  return icon(THUMB, down ? 'matrix(1 0 0 -1 0 24)' : undefined);
}
