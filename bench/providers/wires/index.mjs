// The four wires: how each frames a payload as SSE (see the wire fixtures' README) and which
// request path it answers, plus rendering a scenario to the exact bytes a server sends.
import { TOOL, textDeltas, toolArguments } from '../scenarios.mjs'
import * as anthropic from './anthropic.mjs'
import * as google from './google.mjs'
import * as openaiChat from './openai-chat.mjs'
import * as openaiResponses from './openai-responses.mjs'

const dataOnly = (json) => `data: ${json}\n\n`
const namedByType = (json, payload) => `event: ${payload.type}\ndata: ${json}\n\n`

/** Each wire by its Kode `api` name. */
export const WIRES = {
  'openai-chat': {
    payloads: openaiChat,
    frame: dataOnly,
    end: 'data: [DONE]\n\n',
    answers: (path) => path.endsWith('/chat/completions'),
  },
  anthropic: {
    payloads: anthropic,
    frame: namedByType,
    end: '',
    answers: (path) => path.endsWith('/messages'),
  },
  google: {
    payloads: google,
    // Gemini ends its events with CRLF.
    frame: (json) => `data: ${json}\r\n\r\n`,
    end: '',
    answers: (path) => path.endsWith(':streamGenerateContent'),
  },
  'openai-responses': {
    payloads: openaiResponses,
    frame: namedByType,
    end: '',
    answers: (path) => path.endsWith('/responses'),
  },
}

/** Wire names in table order. */
export const WIRE_NAMES = Object.keys(WIRES)

/** The wire whose endpoint `path` is, or undefined. */
export function wireForPath(path) {
  return WIRE_NAMES.find((name) => WIRES[name].answers(path))
}

/** The payload objects of `scenario` on `wire`, in stream order. */
export function scenarioPayloads(wire, scenario) {
  const { payloads } = WIRES[wire]
  switch (scenario) {
    case 'text':
      return payloads.textPayloads(textDeltas())
    case 'tool':
      return payloads.toolPayloads(TOOL.name, toolArguments())
    default:
      throw new Error(`unknown scenario ${scenario}`)
  }
}

/** The complete SSE body of `scenario` on `wire`, as one buffer. */
export function renderStream(wire, scenario) {
  const { frame, end } = WIRES[wire]
  const body = scenarioPayloads(wire, scenario)
    .map((payload) => frame(JSON.stringify(payload), payload))
    .join('')
  return Buffer.from(body + end, 'utf8')
}
