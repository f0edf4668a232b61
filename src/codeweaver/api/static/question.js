/* question.js: a user's question as the reader pasted it: fenced code blocks become code
 * blocks, `inline code` becomes code, everything else stays text with its line breaks.
 *
 * Only code is rendered: emphasis, links and headings are left as typed, because in a
 * programming question `*args`, `__init__` or `# comment` are more often code than markup.
 * Every piece goes in with textContent; nothing here parses HTML.
 */
import { el } from './dom.js';

// A fence opens with 3+ backticks or tildes (up to 3 spaces in, as in CommonMark); the
// info string's first word names the language. A backtick fence's info has no backtick.
const FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)[^`]*$/;
const LANGUAGE = /^[A-Za-z0-9_+#.-]{1,30}$/;

/** Fill `container` with `text` rendered as described above. */
export function renderQuestion(container, text) {
  const lines = String(text).split(/\r\n|\r|\n/);
  let paragraph = [];
  const flush = () => {
    if (paragraph.length) container.append(textBlock(paragraph.join('\n')));
    paragraph = [];
  };
  for (let i = 0; i < lines.length; i += 1) {
    const open = FENCE.exec(lines[i]);
    if (!open) {
      if (lines[i].trim() === '') flush();
      else paragraph.push(lines[i]);
      continue;
    }
    flush();
    const fence = open[1];
    const body = [];
    // An unclosed fence runs to the end of the question, as in CommonMark.
    for (i += 1; i < lines.length && !closes(lines[i], fence); i += 1) body.push(lines[i]);
    container.append(codeBlock(body.join('\n'), open[2]));
  }
  flush();
}

/** Whether `line` closes a block opened with `fence`: same character, at least as long. */
function closes(line, fence) {
  const trimmed = line.trim();
  return (
    trimmed.length >= fence.length &&
    /^(`+|~+)$/.test(trimmed) &&
    trimmed[0] === fence[0] &&
    /^ {0,3}\S/.test(line)
  );
}

function codeBlock(text, info) {
  const pre = el('pre');
  const code = el('code');
  if (LANGUAGE.test(info)) code.className = 'language-' + info;
  code.textContent = text;
  pre.append(code);
  return pre;
}

/** A paragraph whose `code spans` become <code>; the rest are text nodes. */
function textBlock(text) {
  const p = el('p');
  const span = /(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g;
  let last = 0;
  for (let match = span.exec(text); match; match = span.exec(text)) {
    if (match.index > last) p.append(text.slice(last, match.index));
    const code = el('code');
    code.textContent = match[2];
    p.append(code);
    last = match.index + match[0].length;
  }
  if (last < text.length) p.append(text.slice(last));
  return p;
}
