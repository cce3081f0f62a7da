//! A gzip writer that deflates independent blocks on several threads (`a2c pack --threads N`,
//! as pigz does, without its dictionary carry-over): the input is cut into blocks of
//! [`BLOCK`] bytes, each deflated alone and ended on a byte boundary by a sync flush, the last
//! one with the final flag; the CRC-32s are combined in order. The output depends only on the
//! input and the level — the same bytes for any number of threads — but differs from a single
//! deflate stream's, so a version must be re-packed with the setting it was published with.

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::mpsc;

/// Input bytes per block.
pub const BLOCK: usize = 1 << 20;

/// What a worker gives back for block `index`: the deflated bytes, the CRC-32 and length of
/// its input.
type Done = (usize, io::Result<Vec<u8>>, flate2::Crc);

pub struct BlockGzWriter<W: Write> {
    out: W,
    level: u32,
    block: Vec<u8>,
    next_index: usize,
    next_to_write: usize,
    jobs: Option<mpsc::SyncSender<(usize, Vec<u8>)>>,
    done: mpsc::Receiver<Done>,
    finished: BTreeMap<usize, (io::Result<Vec<u8>>, flate2::Crc)>,
    workers: Vec<std::thread::JoinHandle<()>>,
    crc: flate2::Crc,
    in_flight: usize,
    threads: usize,
}

fn deflate(input: &[u8], level: u32, last: bool) -> io::Result<Vec<u8>> {
    use flate2::{Compress, Compression, FlushCompress, Status};
    let mut c = Compress::new(Compression::new(level), false);
    let mut out = Vec::with_capacity(input.len() / 2 + 1024);
    let flush = if last {
        FlushCompress::Finish
    } else {
        FlushCompress::Sync
    };
    loop {
        let consumed = c.total_in() as usize;
        let status = c
            .compress_vec(&input[consumed..], &mut out, flush)
            .map_err(io::Error::other)?;
        let all_in = c.total_in() as usize == input.len();
        // Done when the input is in and deflate stopped with room to spare (a sync flush),
        // or reported the end of the stream (the last block).
        match (last, status) {
            (true, Status::StreamEnd) => return Ok(out),
            (false, _) if all_in && out.len() < out.capacity() => return Ok(out),
            _ => out.reserve(64 * 1024),
        }
    }
}

impl<W: Write> BlockGzWriter<W> {
    /// A writer deflating at `level` on `threads` threads, writing the gzip member to `out`.
    pub fn new(mut out: W, level: u32, threads: usize) -> io::Result<Self> {
        // The gzip header: deflate, no flags, mtime 0, no extra flags, OS unknown.
        out.write_all(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff])?;
        let threads = threads.max(1);
        let (jobs_tx, jobs_rx) = mpsc::sync_channel::<(usize, Vec<u8>)>(threads);
        let jobs_rx = std::sync::Arc::new(std::sync::Mutex::new(jobs_rx));
        let (done_tx, done_rx) = mpsc::channel::<Done>();
        let workers = (0..threads)
            .map(|_| {
                let jobs = jobs_rx.clone();
                let done = done_tx.clone();
                std::thread::spawn(move || {
                    loop {
                        let job = crate::util::parallel::locked(&jobs).recv();
                        let Ok((index, input)) = job else { break };
                        let mut crc = flate2::Crc::new();
                        crc.update(&input);
                        let _ = done.send((index, deflate(&input, level, false), crc));
                    }
                })
            })
            .collect();
        Ok(Self {
            out,
            level,
            block: Vec::with_capacity(BLOCK),
            next_index: 0,
            next_to_write: 0,
            jobs: Some(jobs_tx),
            done: done_rx,
            finished: BTreeMap::new(),
            workers,
            crc: flate2::Crc::new(),
            in_flight: 0,
            threads,
        })
    }

    /// Writes every finished block that is next in order; waits for one when `wait`.
    fn drain(&mut self, wait: bool) -> io::Result<()> {
        if wait && self.in_flight > 0 && !self.finished.contains_key(&self.next_to_write) {
            let (i, r, c) = self
                .done
                .recv()
                .map_err(|_| io::Error::other("a deflate worker stopped"))?;
            self.finished.insert(i, (r, c));
        }
        while let Ok((i, r, c)) = self.done.try_recv() {
            self.finished.insert(i, (r, c));
        }
        while let Some((bytes, crc)) = self.finished.remove(&self.next_to_write) {
            self.out.write_all(&bytes?)?;
            self.crc.combine(&crc);
            self.next_to_write += 1;
            self.in_flight -= 1;
        }
        Ok(())
    }

    fn send_block(&mut self) -> io::Result<()> {
        let input = std::mem::replace(&mut self.block, Vec::with_capacity(BLOCK));
        // At most two blocks per thread are in memory at once.
        while self.in_flight >= 2 * self.threads {
            self.drain(true)?;
        }
        self.jobs
            .as_ref()
            .expect("not finished")
            .send((self.next_index, input))
            .map_err(|_| io::Error::other("a deflate worker stopped"))?;
        self.next_index += 1;
        self.in_flight += 1;
        self.drain(false)
    }

    /// Deflates what is left as the last block, writes the trailer, and returns the writer.
    pub fn finish(mut self) -> io::Result<W> {
        while self.in_flight > 0 {
            self.drain(true)?;
        }
        self.jobs = None; // the workers end
        for w in std::mem::take(&mut self.workers) {
            let _ = w.join();
        }
        let last = std::mem::take(&mut self.block);
        let mut crc = flate2::Crc::new();
        crc.update(&last);
        self.out.write_all(&deflate(&last, self.level, true)?)?;
        self.crc.combine(&crc);
        self.out.write_all(&self.crc.sum().to_le_bytes())?;
        self.out.write_all(&self.crc.amount().to_le_bytes())?;
        self.out.flush()?;
        Ok(self.out)
    }
}

impl<W: Write> Write for BlockGzWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = buf.len().min(BLOCK - self.block.len());
        self.block.extend_from_slice(&buf[..n]);
        if self.block.len() == BLOCK {
            self.send_block()?;
        }
        Ok(n)
    }

    /// Nothing to push early: a block is written once it is full and deflated, the rest by
    /// [`BlockGzWriter::finish`] (a flush mid-stream would change the bytes).
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn pack(data: &[u8], threads: usize) -> Vec<u8> {
        let mut w = BlockGzWriter::new(Vec::new(), 6, threads).unwrap();
        for chunk in data.chunks(7919) {
            w.write_all(chunk).unwrap();
        }
        w.finish().unwrap()
    }

    /// Any input round-trips through a standard gzip reader, and the bytes do not depend on
    /// the number of threads.
    #[test]
    fn round_trips_and_is_the_same_for_any_thread_count() {
        let mut data = Vec::new();
        let mut x: u32 = 1;
        while data.len() < 3 * BLOCK + 12345 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let bytes = x.to_le_bytes();
            data.extend_from_slice(if x.is_multiple_of(3) {
                b"a2c block "
            } else {
                &bytes[..2]
            });
        }
        let one = pack(&data, 1);
        assert_eq!(pack(&data, 2), one);
        assert_eq!(pack(&data, 5), one);
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&one[..]).read_to_end(&mut back).unwrap();
        assert_eq!(back, data);
        for empty in [&b""[..], &data[..BLOCK]] {
            let mut back = Vec::new();
            flate2::read::GzDecoder::new(&pack(empty, 2)[..])
                .read_to_end(&mut back)
                .unwrap();
            assert_eq!(back, empty);
        }
    }
}
