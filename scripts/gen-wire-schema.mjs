// Every message type's fields as data, in the order and with the presence and packing rules
// protobufjs's own encoder uses (src/encoder.js: fields sorted by id; implicit-presence scalars
// skipped at their default; proto3 numeric lists packed). gen-wire-encoders.mjs turns them into
// the fast writer's code (src/xds/wire/); protobufjs stays the reference it is tested against.
import { readFileSync } from 'node:fs';
import protobuf from 'protobufjs';

/** Bits of a field's flags. */
export const FLAG = {
  repeated: 1,
  packed: 2,
  map: 4,
  /** written only when not the type's default (proto3 implicit presence) */
  implicit: 8,
  /** a group (delimited) or a required field: the fast writer hands the message back */
  unsupported: 16,
};

/**
 * descriptorJs: the generated descriptor module (`export default {…};`). Returns type →
 * [[name, id, scalar type or '' for a message, flags, message type or map key type, map value message type]].
 */
export function readWireTypes(descriptorJs) {
  const text = readFileSync(descriptorJs, 'utf8');
  const json = JSON.parse(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1));
  const root = protobuf.Root.fromJSON(json);
  root.resolveAll();
  const types = {};
  const walk = (ns) => {
    for (const nested of ns.nestedArray) {
      if (nested instanceof protobuf.Type) types[nested.fullName.slice(1)] = fieldsOf(nested);
      if (nested.nestedArray) walk(nested);
    }
  };
  walk(root);
  return types;
}

function fieldsOf(type) {
  return type.fieldsArray
    .slice()
    .sort(protobuf.util.compareFieldsById)
    .map((f) => {
      f.resolve();
      const isEnum = f.resolvedType instanceof protobuf.Enum;
      const scalar = isEnum ? 'int32' : protobuf.types.basic[f.type] !== undefined ? f.type : '';
      let flags = 0;
      if (f.map) flags |= FLAG.map;
      else if (f.repeated) {
        flags |= FLAG.repeated;
        if (f.packed && protobuf.types.packed[scalar] !== undefined) flags |= FLAG.packed;
      } else if (!f.required && !f.hasPresence && scalar !== '') flags |= FLAG.implicit;
      if (f.delimited || f.required) flags |= FLAG.unsupported;
      const message = scalar === '' ? f.resolvedType.fullName.slice(1) : '';
      if (f.map) return [f.name, f.id, scalar, flags, f.keyType, message];
      return message ? [f.name, f.id, scalar, flags, message] : [f.name, f.id, scalar, flags];
    });
}
