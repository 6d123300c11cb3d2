import { Ajv } from '@modelcontextprotocol/server/validators/ajv';
import { InvalidRequestError } from '@/core/errors';
import { ARGUMENT_BOUNDS, inputFault, memberPath } from '@/core/input-rules';
import { isRecord } from '@/core/parameters/parameter-definition';
import { LOOSE_INPUTS, ToolName } from '@/mcp/mcp-schemas';

/** A JSON-RPC member read as an object: itself when it is one, else empty (a missing or malformed one). */
export function objectOf(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

/** Where a tool call's arguments are named from in a refusal: `arguments.sql`. */
const ROOT = 'arguments';

// The SDK's own copy of Ajv (its validators export): the same engine the SDK validates with, whose errors
// say where (`instancePath`) and which property (`params`), which the SDK's message drops.
const ajv = new Ajv({ allErrors: false });
const CHECKS = Object.fromEntries(
  Object.entries(LOOSE_INPUTS).map(([tool, schema]) => [tool, ajv.compile(schema)]),
) as Record<ToolName, ReturnType<typeof ajv.compile>>;

interface SchemaError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  integer: 'a whole number',
  number: 'a number',
  object: 'an object',
  array: 'a list',
  boolean: 'true or false',
};

/** `/selections/a~1b/2` as `arguments.selections["a/b"][2]`. */
function pathOf(pointer: string): string {
  if (pointer === '') return ROOT;
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<string>(
      (path, segment) => memberPath(path, /^\d+$/.test(segment) ? Number(segment) : segment),
      ROOT,
    );
}

function quoted(name: unknown): string {
  return JSON.stringify(String(name).slice(0, 64));
}

/** One schema error as a sentence that names the argument at fault. */
function describe(error: SchemaError): string {
  const path = pathOf(error.instancePath);
  switch (error.keyword) {
    case 'additionalProperties':
      return `${path}: unknown property ${quoted(error.params.additionalProperty)}`;
    case 'required':
      return `${memberPath(path, String(error.params.missingProperty))} is required`;
    case 'type': {
      const type = String(error.params.type);
      return `${path} must be ${TYPE_NAMES[type] ?? type}`;
    }
    default:
      return `${path} ${error.message ?? 'is not valid'}`;
  }
}

/**
 * Refuses a tool call's arguments that break the input rules every door applies (core/input-rules.ts: text
 * storage can hold, nesting, members, string sizes) or the tool's JSON types (LOOSE_INPUTS), naming the
 * argument at fault: `arguments.sql must be a string`, `arguments: unknown property "foo"`. The values
 * themselves (an item's name, a selection) are the services' to check, with the HTTP endpoints' messages.
 * The rules come first: a 100,000-character key is refused as such, not quoted back as a property name.
 */
export function checkArguments(tool: ToolName, args: unknown): Record<string, unknown> {
  const fault = inputFault(args, ROOT, ARGUMENT_BOUNDS);
  if (fault) throw new InvalidRequestError(fault.message);
  const check = CHECKS[tool];
  if (!check(args)) {
    const [first] = (check.errors ?? []) as SchemaError[];
    throw new InvalidRequestError(first ? describe(first) : `${ROOT} are not valid`);
  }
  return args as Record<string, unknown>;
}
