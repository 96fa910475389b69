package dev.kvindexer.recovery;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.Objects;
import java.util.zip.CRC32C;

/** A snapshot file's body as its writer and its reader see it, between the envelope's header and trailer. */
final class SnapshotBody {
    private SnapshotBody() {}

    /** The body as the writer sees it: counts and checksums what passes, and stops a body past the limit. */
    static final class Output extends OutputStream {
        private final OutputStream out;
        private final long maxBytes;
        private final int envelopeBytes;
        private final CRC32C crc = new CRC32C();
        private long length;

        /** {@code maxBytes} bounds the whole file: the body and the {@code envelopeBytes} around it. */
        Output(OutputStream out, long maxBytes, int envelopeBytes) {
            this.out = out;
            this.maxBytes = maxBytes;
            this.envelopeBytes = envelopeBytes;
        }

        long length() {
            return length;
        }

        /** The CRC-32C of the body so far, as the trailer stores it. */
        int crc() {
            return (int) crc.getValue();
        }

        @Override
        public void write(int b) throws IOException {
            count(1);
            out.write(b);
            crc.update(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            Objects.checkFromIndexSize(off, len, b.length);
            count(len);
            out.write(b, off, len);
            crc.update(b, off, len);
        }

        /** A file the limit would reject at the next start is not worth the disk it fills. */
        private void count(int bytes) throws IOException {
            length += bytes;
            if (length + envelopeBytes > maxBytes) {
                throw new IOException("the snapshot is larger than the limit of " + maxBytes + " bytes");
            }
        }

        @Override
        public void flush() throws IOException {
            out.flush();
        }

        /** A writer that closes its stream must not close the file: the trailer still follows the body. */
        @Override
        public void close() {}
    }

    /** The body as the reader sees it: the bytes between header and trailer, and no further. */
    static final class Input extends InputStream {
        private final FileChannel channel;
        private final long end;
        private long position;

        /** The {@code bodyBytes} from {@code start}. */
        Input(FileChannel channel, long start, long bodyBytes) {
            this.channel = channel;
            this.position = start;
            this.end = start + bodyBytes;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            Objects.checkFromIndexSize(off, len, b.length);
            if (len == 0) {
                return 0;
            }
            if (position >= end) {
                return -1;
            }
            int n = channel.read(ByteBuffer.wrap(b, off, (int) Math.min(len, end - position)), position);
            if (n < 0) {
                throw new EOFException("the file shrank while being read");
            }
            position += n;
            return n;
        }

        @Override
        public int available() {
            return (int) Math.min(end - position, Integer.MAX_VALUE);
        }

        /** The channel is the loader's, closed once the reader is done. */
        @Override
        public void close() {}
    }
}
