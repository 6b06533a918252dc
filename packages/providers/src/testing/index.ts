/**
 * @kode/providers/testing: helpers for testing code that talks to LLM providers without the
 * internet: SSE framing per wire api (and, next to it, a local scripted SSE server).
 */
export {
  type FramedApi,
  frameChat,
  frameFor,
  frameGoogle,
  frameTyped,
  sseComment,
  sseFrame,
} from './framing.js'
