/**
 * @kode/providers/testing: helpers for testing code that talks to LLM providers without the
 * internet: a local scripted SSE server, scripted model responses in each api's wire format
 * (`scriptedResponse`), SSE framing per wire api, seeded chunking, fixture reading, and the
 * provider conformance kit.
 */

export { type ChunkOptions, seededRandom, splitBytes } from './chunking.js'
export { runProviderConformance } from './conformance.js'
export type {
  ConformanceCase,
  ConformanceCheck,
  ConformanceFailure,
  ConformanceNotRun,
  ConformanceOptions,
  ConformanceReport,
} from './conformance-types.js'
export type { CaseExpectations } from './contract.js'
export { readChunksFile } from './fixtures.js'
export {
  type FramedApi,
  frameChat,
  frameFor,
  frameGoogle,
  frameTyped,
  sseComment,
  sseFrame,
} from './framing.js'
export { openedFetch } from './opened-fetch.js'
export type { ResponseScript, ScriptStep } from './script.js'
export { type ScriptedApi, scriptedResponse } from './scripted-response.js'
export {
  createSseTestServer,
  type RecordedRequest,
  type ResponseEnd,
  type ResponseHandler,
  type ScriptedResponse,
  type SseTestServer,
  type SseTestServerOptions,
} from './server.js'
export { unknownFrameFor } from './unknown-event.js'
