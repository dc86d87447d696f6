// Keeps a WebSocket to a Crossbar relay open by the client contract (docs/protocol.md#the-client-contract):
// after every close it reconnects after a random delay of up to 0.5 s, doubling with each failure
// up to 30 s ("full jitter", so that a lab's viewers do not all come back at the same moment after
// a relay restart). It does not reconnect after 1000 (the other end ended, e.g. a shell exited) or
// 1008 (the token expired or was revoked: the page needs a new one). A browser sees no HTTP status:
// a refused connection (401, 503, ...) closes with 1006 like a lost one, and is retried the same way.
'use strict';

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 30000;
/** A connection that lasted this long worked: the next failure starts the back-off again. */
const STABLE_MS = 10000;

/**
 * Opens `url()` (a function, so that each attempt can carry a fresh token) and reopens it by the
 * contract. Handlers: onOpen(ws), onMessage(event), onStatus(state, text, closeCode) with state
 * one of "connecting", "open", "waiting" (to reconnect), "ended". Returns { send(data), close(),
 * restart() }; send returns false when there is no open connection: nothing is queued or resent.
 */
function keepConnected(url, { onOpen = () => {}, onMessage = () => {}, onStatus = () => {}, binaryType = 'arraybuffer' } = {}) {
  let ws = null;
  let failures = 0;
  let timer = 0;
  let ended = false;

  function connect() {
    let openedAt = 0;
    onStatus('connecting', 'connecting…');
    ws = new WebSocket(url());
    ws.binaryType = binaryType;
    ws.onopen = (event) => {
      openedAt = Date.now();
      onStatus('open', 'connected');
      onOpen(event.target);
    };
    ws.onmessage = onMessage;
    ws.onclose = (event) => {
      ws = null;
      if (ended) return;
      const why = `closed ${event.code}${event.reason ? ` (${event.reason})` : ''}`;
      if (event.code === 1000) {
        ended = true;
        onStatus('ended', why, event.code);
        return;
      }
      if (event.code === 1008) {
        ended = true;
        onStatus('ended', `${why}: reload the page with a new token`, event.code);
        return;
      }
      if (openedAt && Date.now() - openedAt >= STABLE_MS) failures = 0;
      const delay = Math.random() * Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** failures);
      failures++;
      onStatus('waiting', `${why}; reconnecting in ${(delay / 1000).toFixed(1)} s`, event.code);
      timer = setTimeout(connect, delay);
    };
  }

  connect();
  return {
    send(data) {
      if (!ws || ws.readyState !== WebSocket.OPEN) return false;
      ws.send(data);
      return true;
    },
    close() {
      ended = true;
      clearTimeout(timer);
      if (ws) ws.close(1000);
    },
    /** Starts again after "ended", e.g. when the user asks for a new session. */
    restart() {
      if (!ended || ws) return;
      ended = false;
      failures = 0;
      connect();
    },
  };
}

/** The relay and stream from the page's URL: ?relay=ws://host:8080&stream=lab/cam&token=... */
function pageParams(defaultStream) {
  const q = new URLSearchParams(location.search);
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  return {
    relay: (q.get('relay') || `${scheme}://${location.hostname || 'localhost'}:8080`).replace(/\/$/, ''),
    stream: (q.get('stream') || defaultStream).replace(/^\//, ''),
    // Browsers cannot set headers on a WebSocket: the token goes in the query. A page whose tokens
    // expire would fetch a fresh one here (e.g. from the lab's booking system) before each attempt.
    token: () => q.get('token'),
  };
}

/** `relay + path`, with `?token=` when the page has one. */
function relayUrl(params, path) {
  const token = params.token();
  return params.relay + path + (token ? `?token=${encodeURIComponent(token)}` : '');
}
