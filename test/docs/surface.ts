import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { repo } from './blocks.js'

/** What one public entry point exports, as its type declarations say. */
export interface Surface {
  /** Names with a runtime value (functions, classes, constants, TypeBox schemas). */
  values: string[]
  /** Names of exported interfaces and type aliases. */
  types: string[]
  /** The fields of each exported options type (see `isOptionsType`), by type name. */
  fields: Record<string, string[]>
}

/** The published entry points, mapped to their sources as in tsconfig.base.json's `paths`. */
export const entries: Record<string, string> = JSON.parse(
  readFileSync(join(repo, 'tsconfig.base.json'), 'utf8'),
).compilerOptions.paths

/** The types whose fields a user sets: `AgentOptions`, `ClientConfig`, `CreateSessionInit`, ... */
export const isOptionsType = (name: string) => /(Options|Config|Settings|Init|Spec|Patch)$/.test(name)

/**
 * Every entry point's exports, read by the TypeScript compiler from the sources (one program for
 * all entries, resolved through the same `paths` the packages use), so a clean clone needs no build.
 */
export function surfaces(): Record<string, Surface> {
  const base = JSON.parse(readFileSync(join(repo, 'tsconfig.base.json'), 'utf8'))
  const { options } = ts.convertCompilerOptionsFromJson(base.compilerOptions, repo)
  const files = Object.values(entries).map((path) => join(repo, path[0]!))
  const program = ts.createProgram(files, { ...options, noEmit: true })
  const checker = program.getTypeChecker()
  return Object.fromEntries(
    Object.entries(entries).map(([entry, [path]]) => {
      const module = checker.getSymbolAtLocation(program.getSourceFile(join(repo, path!))!)!
      const surface: Surface = { values: [], types: [], fields: {} }
      for (const exported of checker.getExportsOfModule(module)) {
        const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
        if (symbol.flags & ts.SymbolFlags.Value) surface.values.push(exported.name)
        if (!(symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias))) continue
        surface.types.push(exported.name)
        if (isOptionsType(exported.name)) surface.fields[exported.name] = fieldsOf(checker, symbol)
      }
      return [entry, surface]
    }),
  )
}

/**
 * The fields of a type (of every member, for a union), without those typed `never`: the
 * `url?: never` of a discriminated union is a guard, not an option.
 */
function fieldsOf(checker: ts.TypeChecker, symbol: ts.Symbol): string[] {
  const type = checker.getDeclaredTypeOfSymbol(symbol)
  const fields = new Set<string>()
  for (const member of type.isUnion() ? type.types : [type]) {
    for (const property of checker.getPropertiesOfType(member)) {
      const declared = checker.getNonNullableType(checker.getTypeOfSymbol(property))
      if (!(declared.flags & ts.TypeFlags.Never)) fields.add(property.name)
    }
  }
  return [...fields]
}
