/** The shape of a protobufjs JSON descriptor (`pbjs -t json`), as far as meshsnap reads it. */
export interface DescriptorField {
  readonly type: string;
  readonly id: number;
  readonly rule?: 'repeated';
  readonly keyType?: string;
}

export interface DescriptorNamespace {
  readonly nested?: Readonly<Record<string, DescriptorNamespace>>;
  readonly fields?: Readonly<Record<string, DescriptorField>>;
  readonly values?: Readonly<Record<string, number>>;
  readonly oneofs?: Readonly<Record<string, { readonly oneof: readonly string[] }>>;
}

export type DescriptorRoot = DescriptorNamespace;
