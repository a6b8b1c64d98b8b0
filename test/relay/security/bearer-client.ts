/** A gRPC client to the relay over TLS (trusting `caCert`) that sends `authorization: Bearer <token>` on every call. */
import * as grpc from '@grpc/grpc-js';

export function bearerTlsClient(port: number, caCert: Buffer, token: string): grpc.Client {
  const bearer = grpc.credentials.createFromMetadataGenerator((_p, cb) => {
    const m = new grpc.Metadata();
    m.set('authorization', `Bearer ${token}`);
    cb(null, m);
  });
  return new grpc.Client(
    `127.0.0.1:${port}`,
    grpc.credentials.combineChannelCredentials(grpc.credentials.createSsl(caCert), bearer),
  );
}
