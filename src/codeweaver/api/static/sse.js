/* sse.js: reads a Server-Sent Events stream from a fetch() response body.
 *
 * EventSource cannot POST or send the bearer token, so the chat stream is read by hand.
 * Event data is handed over as the raw string; the caller parses and renders it.
 */

/**
 * Read an SSE body (fetch, because EventSource cannot POST) and call
 * `onEvent(name, data, id)` per event. Follows the WHATWG parsing rules: lines end in
 * CRLF, LF or CR; lines starting with ':' are comments (the server's keep-alive pings);
 * a blank line dispatches the event.
 */
export async function readEvents(body, onEvent) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let name = '';
  let data = [];
  let id = '';

  const line = (text) => {
    if (text === '') {
      if (data.length) onEvent(name || 'message', data.join('\n'), id);
      name = '';
      data = [];
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') name = value;
    else if (field === 'data') data.push(value);
    else if (field === 'id') id = value;
  };

  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    let text = buffer + decoder.decode(value, { stream: true });
    // A CR at the very end may be the first half of a CRLF split across two chunks:
    // keep it back, or the LF would read as a blank line and dispatch too early.
    let held = '';
    if (text.endsWith('\r')) {
      held = '\r';
      text = text.slice(0, -1);
    }
    const lines = text.split(/\r\n|\r|\n/);
    buffer = lines.pop() + held;
    for (const l of lines) line(l);
  }
  // An event without its closing blank line is incomplete and, per the spec, dropped.
}
