import type { ModelInfo } from '../types.js'
import { BUILTIN_ROWS, rowInfo } from './models.js'

/**
 * The catalog entry for `model` on `api`: the host's `extra` entry if it has one, else the
 * built-in one, else `undefined`. The built-in table is only scanned on lookup (no import-time work).
 */
export function lookupModel(
  api: string,
  model: string,
  extra?: Readonly<Record<string, ModelInfo>>,
): ModelInfo | undefined {
  const own = extra && Object.hasOwn(extra, model) ? extra[model] : undefined
  if (own) return own
  const row = BUILTIN_ROWS[api]?.find(([ids]) => ids.includes(model))
  return row ? rowInfo(row) : undefined
}

/** Every model id the built-in catalog knows for `api`. */
export function catalogModels(api: string): string[] {
  return (BUILTIN_ROWS[api] ?? []).flatMap(([ids]) => [...ids])
}
