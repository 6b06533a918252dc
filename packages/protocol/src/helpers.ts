/**
 * @kode/protocol/helpers: the package's plain functions, without its schemas or codec. Importing
 * it loads no TypeBox and builds no schema, so a package that needs only these functions at run
 * time (as @kode/providers does) keeps its own import cheap. The main entry exports them too.
 */
export {
  isInterrupt,
  isRole,
  joinText,
  joinThinking,
  serverToolsOf,
  toolCallsOf,
  toolResultEventStatus,
} from './message-helpers.js'
export { addUsage, computeCostUsd } from './usage-arithmetic.js'
