// Plays a Crossbar video stream (MPEG-1 in MPEG-TS, as jsmpeg cameras send it) with JSMpeg.
'use strict';

/**
 * A JSMpeg source (the interface of JSMpeg.Source.WebSocket) whose socket reconnects by the client
 * contract (reconnect.js). JSMpeg's own source retries every 5 s on the dot, so after a relay
 * restart every viewer of a lab would come back in the same instant. The decoder is kept across
 * reconnections: it finds its way back at the next keyframe, and at once on a start=keyframe stream.
 */
class ReconnectingSource {
  constructor(url, options) {
    this.url = url;
    this.options = options;
    this.destination = null;
    this.streaming = true;
    this.established = false; // JSMpeg starts playing at the first data
    this.completed = false;
    this.progress = 0;
  }

  connect(destination) {
    this.destination = destination;
  }

  start() {
    this.connection = keepConnected(() => this.url, {
      onOpen: () => { this.progress = 1; },
      onMessage: (event) => {
        if (!this.established) {
          this.established = true;
          if (this.options.hookOnEstablished) this.options.hookOnEstablished();
        }
        this.destination.write(event.data);
      },
      onStatus: this.options.onStatus,
    });
  }

  resume() {
    // Live: nothing to fetch ahead.
  }

  destroy() {
    this.connection.close();
  }
}

const params = pageParams('cam/1');
const status = document.getElementById('status');
const framesShown = document.getElementById('frames');
let frames = 0;

new JSMpeg.Player(relayUrl(params, `/out/${params.stream}`), {
  canvas: document.getElementById('video'),
  source: ReconnectingSource,
  audio: false,
  onVideoDecode: () => { frames++; },
  onStatus: (state, text) => {
    status.dataset.state = state;
    status.textContent = text;
  },
});
setInterval(() => { framesShown.textContent = frames; }, 500);
