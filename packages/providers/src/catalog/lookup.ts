import type { ModelInfo } from '../types.js'
import { BUILTIN_ROWS, rowInfo } from './models.js'

const GEMINI_MODEL_PREFIX = 'models/'

/**
 * The catalog entry for `model` on `api`: the host's `extra` entry if it has one, else the
 * built-in one, else `undefined`. The built-in table is only scanned on lookup (no import-time work).
 * A Gemini model named by its resource name (`models/gemini-2.5-flash`, as `models.list` names
 * it) is the model of that id; the host's own entry under the name as given comes first.
 */
export function lookupModel(
  api: string,
  model: string,
  extra?: Readonly<Record<string, ModelInfo>>,
): ModelInfo | undefined {
  const own = extra && Object.hasOwn(extra, model) ? extra[model] : undefined
  if (own) return own
  const id =
    api === 'google' && model.startsWith(GEMINI_MODEL_PREFIX)
      ? model.slice(GEMINI_MODEL_PREFIX.length)
      : model
  const row = BUILTIN_ROWS[api]?.find(([ids]) => ids.includes(id))
  return row ? rowInfo(row) : undefined
}

/** Every model id the built-in catalog knows for `api`. */
export function catalogModels(api: string): string[] {
  return (BUILTIN_ROWS[api] ?? []).flatMap(([ids]) => [...ids])
}
