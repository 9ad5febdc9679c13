//! The XDP program, assembled here as eBPF instructions: it sends DNS over UDP for the
//! served addresses to the AF_XDP socket of the receiving queue, and every other frame
//! to the kernel.
//!
//! Why hand-assembled: the program is some sixty instructions of header checks, and
//! building it here needs no clang, no BPF linker, no nightly toolchain and no C
//! library at build or run time; the addresses and ports are written into it as
//! immediates, so it needs no configuration map either. The instruction set is the
//! kernel's (`Documentation/bpf/standardization/instruction-set.rst`); the verifier
//! checks every packet access against `data_end`, as the comments below say.
//!
//! What it redirects: Ethernet (up to two 802.1Q/802.1ad tags), then IPv4 that is not a
//! fragment (MF clear, offset 0; options skipped by IHL) or IPv6 whose next header is
//! UDP (extension headers, including fragments, are the kernel's), then UDP to one of
//! the listen addresses and ports (a wildcard address matches its family). The redirect
//! is `bpf_redirect_map(xsks, rx_queue_index, XDP_PASS)`: a queue without a socket
//! passes its frames to the kernel. TCP, ICMP, ARP, neighbour discovery and the rest
//! always do.

use std::net::{IpAddr, SocketAddr};

/// One eBPF instruction (`struct bpf_insn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub struct Insn {
    code: u8,
    /// Destination register in the low nibble, source in the high.
    regs: u8,
    off: i16,
    imm: i32,
}

// Instruction classes, sizes, modes and operations (instruction-set.rst).
const LD: u8 = 0x00;
const LDX: u8 = 0x01;
const ALU64: u8 = 0x07;
const JMP: u8 = 0x05;
const JMP32: u8 = 0x06;
const W: u8 = 0x00;
const H: u8 = 0x08;
const B: u8 = 0x10;
const DW: u8 = 0x18;
const MEM: u8 = 0x60;
const IMM: u8 = 0x00;
const K: u8 = 0x00;
const X: u8 = 0x08;
const ADD: u8 = 0x00;
const AND: u8 = 0x50;
const LSH: u8 = 0x60;
const MOV: u8 = 0xb0;
const JA: u8 = 0x00;
const JEQ: u8 = 0x10;
const JGT: u8 = 0x20;
const JSET: u8 = 0x40;
const JNE: u8 = 0x50;
const JLT: u8 = 0xa0;
const CALL: u8 = 0x80;
const EXIT: u8 = 0x90;
/// `src_reg` of an `ld_imm64` whose immediate is a map's file descriptor.
const PSEUDO_MAP_FD: u8 = 1;
/// `bpf_redirect_map` (`include/uapi/linux/bpf.h`, `enum bpf_func_id`).
const HELPER_REDIRECT_MAP: i32 = 51;
/// `XDP_PASS` (`enum xdp_action`).
pub const XDP_PASS: i32 = 2;

// `struct xdp_md` offsets.
const MD_DATA: i16 = 0;
const MD_DATA_END: i16 = 4;
const MD_RX_QUEUE_INDEX: i16 = 16;

// Registers: r0 return, r1-r5 arguments (clobbered by calls), r6-r9 kept.
const R0: u8 = 0;
const R1: u8 = 1;
const R2: u8 = 2;
const R3: u8 = 3;
const R4: u8 = 4;
const R5: u8 = 5;
const R6: u8 = 6;
const R7: u8 = 7;
const R8: u8 = 8;

/// A jump target not yet placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Label(usize);

/// Collects instructions and resolves jumps to labels.
#[derive(Debug, Default)]
struct Assembler {
    insns: Vec<Insn>,
    /// Where each label is, once placed.
    labels: Vec<Option<usize>>,
    /// Jumps to patch: instruction index and label.
    jumps: Vec<(usize, Label)>,
}

impl Assembler {
    fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    fn place(&mut self, label: Label) {
        if let Some(slot) = self.labels.get_mut(label.0) {
            *slot = Some(self.insns.len());
        }
    }

    fn emit(&mut self, code: u8, dst: u8, src: u8, off: i16, imm: i32) {
        self.insns.push(Insn { code, regs: dst | (src << 4), off, imm });
    }

    /// `dst = *(size *)(src + off)`.
    fn load(&mut self, size: u8, dst: u8, src: u8, off: i16) {
        self.emit(LDX | MEM | size, dst, src, off, 0);
    }

    /// `dst op= imm` (64-bit).
    fn alu_imm(&mut self, op: u8, dst: u8, imm: i32) {
        self.emit(ALU64 | op | K, dst, 0, 0, imm);
    }

    /// `dst op= src` (64-bit).
    fn alu_reg(&mut self, op: u8, dst: u8, src: u8) {
        self.emit(ALU64 | op | X, dst, src, 0, 0);
    }

    /// `if dst op imm goto to`; `class` is [`JMP`] (64-bit) or [`JMP32`].
    fn jump_imm(&mut self, class: u8, op: u8, dst: u8, imm: i32, to: Label) {
        self.jumps.push((self.insns.len(), to));
        self.emit(class | op | K, dst, 0, 0, imm);
    }

    /// `if dst op src goto to` (64-bit).
    fn jump_reg(&mut self, op: u8, dst: u8, src: u8, to: Label) {
        self.jumps.push((self.insns.len(), to));
        self.emit(JMP | op | X, dst, src, 0, 0);
    }

    fn goto(&mut self, to: Label) {
        self.jump_imm(JMP, JA, 0, 0, to);
    }

    /// Leaves for `fail` unless `bytes` bytes from packet pointer `at` are in the packet
    /// (`r3` holds `data_end`; `r4` is clobbered): the check the verifier asks for.
    fn need(&mut self, at: u8, bytes: i32, fail: Label) {
        self.alu_reg(MOV, R4, at);
        self.alu_imm(ADD, R4, bytes);
        self.jump_reg(JGT, R4, R3, fail);
    }

    /// Resolves the jumps; `None` if one names a label never placed or too far.
    fn finish(mut self) -> Option<Vec<Insn>> {
        for &(at, label) in &self.jumps {
            let target = (*self.labels.get(label.0)?)?;
            let off = i16::try_from(target as i64 - at as i64 - 1).ok()?;
            self.insns.get_mut(at)?.off = off;
        }
        Some(self.insns)
    }
}

/// A 16-bit field as an `ldx h` reads it from the wire (little-endian host order): the
/// immediate to compare with. eBPF on every Linux target this builds for is
/// little-endian as far as loads go: the load takes the host's order.
fn wire_u16(value: u16) -> i32 {
    i32::from(u16::from_ne_bytes(value.to_be_bytes()))
}

/// Four address bytes as an `ldx w` reads them.
fn wire_u32(bytes: [u8; 4]) -> i32 {
    i32::from_ne_bytes(bytes)
}

/// Assembles the program for `listen` (the served addresses and ports) with the XSKMAP
/// whose descriptor is `map_fd`. `None` only if the assembler is misused (a bug).
pub fn assemble(listen: &[SocketAddr], map_fd: i32) -> Option<Vec<Insn>> {
    let mut asm = Assembler::default();
    let pass = asm.label();
    let redirect = asm.label();
    let (l3, v4, v6) = (asm.label(), asm.label(), asm.label());
    asm.alu_reg(MOV, R6, R1);
    asm.load(W, R2, R6, MD_DATA);
    asm.load(W, R3, R6, MD_DATA_END);
    // r2 walks the tags: the IP header is at r2 + 14 after them.
    asm.need(R2, 14, pass);
    asm.load(H, R5, R2, 12);
    for _ in 0..2 {
        let tagged = asm.label();
        asm.jump_imm(JMP, JEQ, R5, wire_u16(0x8100), tagged);
        asm.jump_imm(JMP, JNE, R5, wire_u16(0x88a8), l3);
        asm.place(tagged);
        asm.alu_imm(ADD, R2, 4);
        asm.need(R2, 14, pass);
        asm.load(H, R5, R2, 12);
    }
    asm.place(l3);
    asm.alu_imm(ADD, R2, 14);
    asm.jump_imm(JMP, JEQ, R5, wire_u16(0x0800), v4);
    asm.jump_imm(JMP, JEQ, R5, wire_u16(0x86dd), v6);
    asm.goto(pass);
    asm.place(v4);
    ipv4(&mut asm, listen, pass, redirect);
    asm.place(v6);
    ipv6(&mut asm, listen, pass, redirect);
    asm.place(redirect);
    // bpf_redirect_map(map, ctx->rx_queue_index, XDP_PASS)
    asm.emit(LD | IMM | DW, R1, PSEUDO_MAP_FD, 0, map_fd);
    asm.emit(0, 0, 0, 0, 0);
    asm.load(W, R2, R6, MD_RX_QUEUE_INDEX);
    asm.alu_imm(MOV, R3, XDP_PASS);
    asm.emit(JMP | CALL, 0, 0, 0, HELPER_REDIRECT_MAP);
    asm.emit(JMP | EXIT, 0, 0, 0, 0);
    asm.place(pass);
    asm.alu_imm(MOV, R0, XDP_PASS);
    asm.emit(JMP | EXIT, 0, 0, 0, 0);
    asm.finish()
}

/// IPv4 at r2: UDP, not a fragment, past the options, to a listen address and port.
fn ipv4(asm: &mut Assembler, listen: &[SocketAddr], pass: Label, redirect: Label) {
    asm.need(R2, 20, pass);
    asm.load(B, R5, R2, 9);
    asm.jump_imm(JMP, JNE, R5, 17, pass);
    // Flags and fragment offset: MF or any offset is a fragment.
    asm.load(H, R5, R2, 6);
    asm.jump_imm(JMP, JSET, R5, wire_u16(0x3fff), pass);
    asm.load(W, R7, R2, 16);
    asm.load(B, R5, R2, 0);
    asm.alu_imm(AND, R5, 0x0f);
    asm.alu_imm(LSH, R5, 2);
    asm.jump_imm(JMP, JLT, R5, 20, pass);
    asm.alu_reg(ADD, R2, R5);
    asm.need(R2, 8, pass);
    asm.load(H, R8, R2, 2);
    for addr in listen {
        let IpAddr::V4(ip) = addr.ip() else { continue };
        let next = asm.label();
        asm.jump_imm(JMP, JNE, R8, wire_u16(addr.port()), next);
        if !ip.is_unspecified() {
            asm.jump_imm(JMP32, JNE, R7, wire_u32(ip.octets()), next);
        }
        asm.goto(redirect);
        asm.place(next);
    }
    asm.goto(pass);
}

/// IPv6 at r2: next header UDP, to a listen address and port.
fn ipv6(asm: &mut Assembler, listen: &[SocketAddr], pass: Label, redirect: Label) {
    asm.need(R2, 48, pass);
    asm.load(B, R5, R2, 6);
    asm.jump_imm(JMP, JNE, R5, 17, pass);
    asm.load(H, R8, R2, 42);
    for addr in listen {
        let IpAddr::V6(ip) = addr.ip() else { continue };
        let next = asm.label();
        asm.jump_imm(JMP, JNE, R8, wire_u16(addr.port()), next);
        if !ip.is_unspecified() {
            let octets = ip.octets();
            for (n, word) in octets.chunks_exact(4).enumerate() {
                let bytes = [0, 1, 2, 3].map(|i| word.get(i).copied().unwrap_or(0));
                asm.load(W, R5, R2, 24 + 4 * n as i16);
                asm.jump_imm(JMP32, JNE, R5, wire_u32(bytes), next);
            }
        }
        asm.goto(redirect);
        asm.place(next);
    }
    asm.goto(pass);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listen(addrs: &[&str]) -> Vec<SocketAddr> {
        addrs.iter().map(|a| a.parse().unwrap()).collect()
    }

    #[test]
    fn jumps_land_inside_the_program() {
        let insns = assemble(&listen(&["192.0.2.53:53", "[::]:5353"]), 7).unwrap();
        for (at, insn) in insns.iter().enumerate() {
            let class = insn.code & 0x07;
            let op = insn.code & 0xf0;
            if (class == JMP || class == JMP32) && op != CALL && op != EXIT {
                let target = at as i64 + 1 + i64::from(insn.off);
                assert!(target > at as i64 && (target as usize) < insns.len(), "at {at}");
            }
        }
        let last = insns.last().unwrap();
        assert_eq!(last.code, JMP | EXIT);
    }

    #[test]
    fn map_fd_and_addresses_are_immediates() {
        let insns = assemble(&listen(&["192.0.2.53:53"]), 42).unwrap();
        let map = insns.iter().find(|i| i.code == LD | IMM | DW).unwrap();
        assert_eq!((map.imm, map.regs), (42, R1 | (PSEUDO_MAP_FD << 4)));
        let port = wire_u16(53);
        assert!(insns.iter().any(|i| i.code == JMP | JNE | K && i.imm == port));
        let addr = wire_u32([192, 0, 2, 53]);
        assert!(insns.iter().any(|i| i.code == JMP32 | JNE | K && i.imm == addr));
    }

    #[test]
    fn a_wildcard_compares_no_address() {
        let insns = assemble(&listen(&["0.0.0.0:53", "[::]:53"]), 3).unwrap();
        assert!(!insns.iter().any(|i| i.code & 0x07 == JMP32));
        let v6 = assemble(&listen(&["[2001:db8::53]:53"]), 3).unwrap();
        assert_eq!(v6.iter().filter(|i| i.code & 0x07 == JMP32).count(), 4);
    }

    #[test]
    fn wire_order_immediates() {
        // The bytes 0x00 0x35 (port 53) read as a little-endian u16 are 0x3500.
        if cfg!(target_endian = "little") {
            assert_eq!(wire_u16(53), 0x3500);
            assert_eq!(wire_u16(0x0800), 0x0008);
            assert_eq!(wire_u32([192, 0, 2, 1]), 0x0102_00c0);
        }
    }
}
