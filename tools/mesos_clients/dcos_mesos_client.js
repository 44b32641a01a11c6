// Drives npm's @dcos/mesos-client against a Mesos master's operator API, the way the DC/OS UI
// uses it: request() for read-only calls, stream() for SUBSCRIBE. The package targets browsers
// (it speaks through XMLHttpRequest), so Node gets xhr2's XMLHttpRequest, taught one thing a
// browser does and xhr2 does not: responseText grows while a streamed response arrives (without
// it no stream ever yields a record). Nothing else is ours.
//
//   NODE_PATH=.cache/clients/node/node_modules node tools/mesos_clients/dcos_mesos_client.js \
//       http://HOST:PORT [EVENTS] [CALL,CALL,...]
//
// Prints one line per answer or event: `CALL <type> ok <bytes>` / `CALL <type> error <code> <text>`,
// `EVENT <type>`, and `STREAM error <code> <text>`; exits 0 once every call answered and EVENTS
// events arrived, 1 on any error.
"use strict";

const XHR2 = require("xhr2");

class StreamingXMLHttpRequest extends XHR2 {
  _onHttpResponseData(response, data) {
    if (this._response === response && this.responseType === "text") {
      this.responseText = (this.responseText || "") + data.toString("utf-8");
      this.response = this.responseText;
    }
    return super._onHttpResponseData(response, data);
  }
}
global.XMLHttpRequest = StreamingXMLHttpRequest;
const { request, stream } = require("@dcos/mesos-client");

const base = process.argv[2];
const wantEvents = Number(process.argv[3] || 2);
const calls = (process.argv[4] || "GET_HEALTH,GET_VERSION,GET_FLAGS,GET_STATE").split(",");
const url = `${base}/api/v1`;
let pending = calls.length + 1;
let failed = false;

function done() {
  pending -= 1;
  if (pending === 0) {
    process.exit(failed ? 1 : 0);
  }
}

function describe(error) {
  return `${error.code} ${String(error.response || error.message || "").slice(0, 300).replace(/\n/g, " ")}`;
}

for (const type of calls) {
  request({ type }, url).subscribe(
    body => {
      try {
        const parsed = JSON.parse(body);
        console.log(`CALL ${type} ok ${body.length} ${parsed.type === type ? "" : "type=" + parsed.type}`);
      } catch (e) {
        failed = true;
        console.log(`CALL ${type} unparsable ${String(body).slice(0, 200)}`);
      }
      done();
    },
    error => {
      failed = true;
      console.log(`CALL ${type} error ${describe(error)}`);
      done();
    }
  );
}

let seen = 0;
const subscription = stream({ type: "SUBSCRIBE" }, url).subscribe(
  record => {
    let event;
    try {
      event = JSON.parse(record);
    } catch (e) {
      failed = true;
      console.log(`EVENT unparsable ${String(record).slice(0, 200)}`);
      return;
    }
    console.log(`EVENT ${event.type}`);
    seen += 1;
    if (seen === wantEvents) {
      subscription.unsubscribe();
      done();
    }
  },
  error => {
    failed = true;
    console.log(`STREAM error ${describe(error)}`);
    done();
  },
  () => {
    if (seen < wantEvents) {
      failed = true;
      console.log(`STREAM ended after ${seen} events`);
      done();
    }
  }
);
