/**
 * The shape of the protoc-gen-validate rule table that scripts/gen-validate-rules.mjs generates
 * (src/xds/gen/validate-rules.js) from the Envoy protos' `(validate.rules)` options. Rule bodies
 * keep validate.proto's field names (snake_case), so a rule reads as it does in the .proto file.
 */
export type NumberLike = number | string;

export interface NumberRules {
  readonly const?: NumberLike;
  readonly lt?: NumberLike;
  readonly lte?: NumberLike;
  readonly gt?: NumberLike;
  readonly gte?: NumberLike;
  readonly in?: readonly NumberLike[];
  readonly not_in?: readonly NumberLike[];
  readonly ignore_empty?: boolean;
}

export interface StringRules {
  readonly const?: string;
  readonly len?: NumberLike;
  readonly min_len?: NumberLike;
  readonly max_len?: NumberLike;
  readonly len_bytes?: NumberLike;
  readonly min_bytes?: NumberLike;
  readonly max_bytes?: NumberLike;
  readonly pattern?: string;
  readonly prefix?: string;
  readonly suffix?: string;
  readonly contains?: string;
  readonly not_contains?: string;
  readonly in?: readonly string[];
  readonly not_in?: readonly string[];
  readonly well_known_regex?: 'HTTP_HEADER_NAME' | 'HTTP_HEADER_VALUE' | 'UNKNOWN';
  /** For `well_known_regex` (default true): false only refuses NUL, CR and LF. */
  readonly strict?: boolean;
  readonly ignore_empty?: boolean;
}

export interface BytesRules {
  readonly const?: string;
  readonly len?: NumberLike;
  readonly min_len?: NumberLike;
  readonly max_len?: NumberLike;
  readonly prefix?: string;
  readonly suffix?: string;
  readonly contains?: string;
  readonly in?: readonly string[];
  readonly not_in?: readonly string[];
  readonly ignore_empty?: boolean;
}

export interface EnumRules {
  readonly const?: number;
  readonly defined_only?: boolean;
  readonly in?: readonly number[];
  readonly not_in?: readonly number[];
}

/** A google.protobuf.Duration or Timestamp bound, as written in the rule. */
export interface TimeBound {
  readonly seconds?: NumberLike;
  readonly nanos?: number;
}

export interface DurationRules {
  readonly required?: boolean;
  readonly const?: TimeBound;
  readonly lt?: TimeBound;
  readonly lte?: TimeBound;
  readonly gt?: TimeBound;
  readonly gte?: TimeBound;
  readonly in?: readonly TimeBound[];
  readonly not_in?: readonly TimeBound[];
}

export interface TimestampRules {
  readonly required?: boolean;
  readonly const?: TimeBound;
  readonly lt?: TimeBound;
  readonly lte?: TimeBound;
  readonly gt?: TimeBound;
  readonly gte?: TimeBound;
  readonly lt_now?: boolean;
  readonly gt_now?: boolean;
  readonly within?: TimeBound;
}

export interface RepeatedRules {
  readonly min_items?: NumberLike;
  readonly max_items?: NumberLike;
  readonly unique?: boolean;
  readonly items?: FieldRules;
  readonly ignore_empty?: boolean;
}

export interface MapRules {
  readonly min_pairs?: NumberLike;
  readonly max_pairs?: NumberLike;
  readonly no_sparse?: boolean;
  readonly keys?: FieldRules;
  readonly values?: FieldRules;
  readonly ignore_empty?: boolean;
}

export interface AnyRules {
  readonly required?: boolean;
  readonly in?: readonly string[];
  readonly not_in?: readonly string[];
}

export const NUMBER_KINDS = [
  'float',
  'double',
  'int32',
  'int64',
  'uint32',
  'uint64',
  'sint32',
  'sint64',
  'fixed32',
  'fixed64',
  'sfixed32',
  'sfixed64',
] as const;
export type NumberKind = (typeof NUMBER_KINDS)[number];

/** validate.proto's FieldRules: one kind of rule per field (plus `message`). */
export type FieldRules = {
  readonly [K in NumberKind]?: NumberRules;
} & {
  readonly string?: StringRules;
  readonly bytes?: BytesRules;
  readonly bool?: { readonly const?: boolean };
  readonly enum?: EnumRules;
  readonly message?: { readonly required?: boolean; readonly skip?: boolean };
  readonly repeated?: RepeatedRules;
  readonly map?: MapRules;
  readonly any?: AnyRules;
  readonly duration?: DurationRules;
  readonly timestamp?: TimestampRules;
};

export interface FieldEntry {
  readonly name: string;
  /** A fully qualified message name, `enum`, or a scalar type (`string`, `uint32`, `bytes`, …). */
  readonly type: string;
  /** For `type: 'enum'`: the enum's fully qualified name (its values are in `RuleTable.enums`). */
  readonly enum?: string;
  readonly repeated?: true;
  /** A map field: the key's scalar type; `type` is the value's. */
  readonly map?: string;
  /** A member of a oneof (or a proto3 `optional`): rules apply only when it is set. */
  readonly oneof?: true;
  readonly rules?: FieldRules;
}

export interface MessageEntry {
  /** The fields with rules or leading to a message with rules; the others are not walked. */
  readonly fields: readonly FieldEntry[];
  /** Oneofs marked `(validate.required)`: [oneof name, member field names]. */
  readonly oneofs?: readonly (readonly [string, readonly string[]])[];
}

export interface RuleTable {
  readonly messages: Readonly<Record<string, MessageEntry>>;
  readonly enums: Readonly<Record<string, Readonly<Record<string, number>>>>;
}
