# incast.tcl -- barrier-synchronised TCP NewReno incast in ns-2.35.
#
# Reference run for dcnsim's devkota-fig08/fig09 scenarios.  Driven by
# incast_ns2.py, which reads the "R key value" lines this prints on stdout
# and the event file it writes.  See README.md in this folder.
#
#   ns incast.tcl SERVERS BUFFER_BYTES MINRTO_S DURATION_S EVENT_FILE BARRIER [STEP_S [RATE [WORKLOAD]]]
#
# RATE (default 1Gb): the rate of every link, in ns-2's notation (1Gb, 10Gb).
# WORKLOAD (default sru): "sru" is the barrier-synchronised incast below; "long" gives
# every server one long-lived flow (an FTP source, Application/FTP, that never runs out
# of data) from t = 0 and no rounds -- the long-lived case of benches/peers.py.
#
# STEP_S (default 0): server i's link (i = 0..SERVERS-1) gets the delay 25 us + i * STEP_S.
# With 0 every server's packets reach the switch at the same instants, and the order of
# such "simultaneous" arrivals is then decided by the rounding of ns-2's double-precision
# clock; a step of 1 ns fixes the order (server 0 first) without changing the physics.
#
# BARRIER "receiver": a server's SRU is complete when the client's sink has
# delivered all of it in order (dcnsim's incast app); "sender": when the
# server's TCP has it all acked (the one-way TCP "done" callback).  The next
# round starts, at the same instant, once all SERVERS SRUs are complete.
#
# Star: node "sw" (switch), node "cl" (client), SERVERS server nodes; every
# link duplex 1 Gb/s, 25 us.  Only the sw->cl queue is limited (DropTail, in
# bytes); every other queue has a limit no sender can reach.

if {$argc < 6 || $argc > 9} {
    puts stderr "usage: ns incast.tcl SERVERS BUFFER_BYTES MINRTO_S DURATION_S EVENT_FILE BARRIER \[STEP_S \[RATE \[WORKLOAD\]\]\]"
    exit 2
}
set nservers [lindex $argv 0]
set bufbytes [lindex $argv 1]
set minrto   [lindex $argv 2]
set duration [lindex $argv 3]
set evfile   [lindex $argv 4]
set barrier  [lindex $argv 5]
set step     [expr {$argc >= 7 ? [lindex $argv 6] : 0}]
set rate     [expr {$argc >= 8 ? [lindex $argv 7] : "1Gb"}]
set workload [expr {$argc >= 9 ? [lindex $argv 8] : "sru"}]
if {$workload ne "sru" && $workload ne "long"} {
    puts stderr "WORKLOAD must be sru or long"
    exit 2
}
if {$barrier ne "receiver" && $barrier ne "sender"} {
    puts stderr "BARRIER must be receiver or sender"
    exit 2
}

# --- experiment constants ---------------------------------------------------
set payload   1460                ;# Agent/TCP packetSize_ (data bytes per packet)
set sru_bytes 256000              ;# server response unit
set sru_pkts  [expr {($sru_bytes + $payload - 1) / $payload}]   ;# 176

# --- TCP: only these two differ from ns-2.35's defaults ---------------------
Agent/TCP set packetSize_ $payload
Agent/TCP set minrto_ $minrto
set ippkt [expr {$payload + [Agent/TCP set tcpip_base_hdr_size_]}]  ;# 1500

# Every queue except the bottleneck: a limit (packets) that is never reached.
# A server->switch queue holds at most window_ (20) data packets of its one
# flow, the switch->server queue ACKs of one flow, the client->switch queue at
# most SERVERS*20 ACKs.
Queue set limit_ 1000000

set ns [new Simulator]

set sw [$ns node]
set cl [$ns node]
$ns duplex-link $sw $cl $rate 25us DropTail

# Bottleneck sw->cl: DropTail counting bytes.  drop-tail.cc drops an arriving
# packet p when  byteLength() + size(p) >= limit_ * mean_pktsize_ ; the packet
# being serialised has already left the queue (Queue::recv hands it to the
# link).  With mean_pktsize_ 1 and limit_ B+1 the rule becomes
# "drop when waiting bytes + size(p) > B", i.e. B bytes of waiting packets =
# floor(B/1500) full packets, the transmitting one not counted (dcnsim's rule).
set bq [[$ns link $sw $cl] queue]
$bq set queue_in_bytes_ true
$bq set mean_pktsize_ 1
$bq set limit_ [expr {$bufbytes + 1}]
set qmon [$ns monitor-queue $sw $cl 0]

# One event trace shared by all senders: TcpAgent::timeout() writes a TIMEOUT
# line for every expiry of the retransmission timer.  The round bookkeeping
# below writes D (flow done) and S (round start) lines to the same channel, so
# the file tells which expiries happened while a flow had nothing outstanding.
set evfd [open $evfile w]
set et [new BaseTrace/Event]
$et attach $evfd

# Completed SRUs per server: done(i) (sender barrier) or rcvd(app) (receiver).
#
# Receiver barrier: TcpSink hands the bytes it can deliver in order (IP bytes,
# headers included) to an attached Application, whose Tcl "recv" is called when
# its class defines one (Application::recv, app.cc).  got(app): bytes
# delivered so far; need(app): got() at which the SRU under way is complete
# (round 1 also carries the 40-byte SYN, syn_ true).  This runs once per
# in-order data packet, so it is kept short.  The sender barrier needs no such
# callback (it costs ns about as much again as the simulation at N = 1): there
# the sink's own counter bytes_ (in-order IP bytes, an int) is read at the end
# and restarted at every done, when it holds exactly the acked SRU.
Class Application/SruSink -superclass Application
Application/SruSink instproc recv {nbytes} {
    global got need
    if {[incr got($self) $nbytes] >= $need($self)} {
        sru-received $self
    }
}

set sru_ipbytes [expr {$sru_pkts * $ippkt}]
for {set i 0} {$i < $nservers} {incr i} {
    set srv($i) [$ns node]
    $ns duplex-link $srv($i) $sw $rate [expr {25e-6 + $i * $step}] DropTail
    set tcp($i) [new Agent/TCP/Newreno]
    $tcp($i) set fid_ $i
    $ns attach-agent $srv($i) $tcp($i)
    set sink($i) [new Agent/TCPSink]
    $ns attach-agent $cl $sink($i)
    $ns connect $tcp($i) $sink($i)
    $tcp($i) eventtrace $et
    set index($tcp($i)) $i
    set done($i) 0
    if {$barrier eq "receiver"} {
        set a [new Application/SruSink]
        $a attach-agent $sink($i)
        $a start
        set app($i) $a
        set got($a) 0
        set need($a) [expr {[Agent/TCP set tcpip_base_hdr_size_] + $sru_ipbytes}]
        set rcvd($a) 0
    }
}

set rounds 0
set waiting 0

proc sru-received {a} {
    global need rcvd sru_ipbytes
    incr rcvd($a)
    incr need($a) $sru_ipbytes
    sru-complete
}

# TcpAgent::finish() (tcp.cc) evaluates "$agent done" once everything written
# so far is cumulatively acked (and not again until more is written).
Agent/TCP/Newreno instproc done {} {
    global ns index evfd barrier done sink
    set i $index($self)
    puts $evfd "D [$ns now] $i"
    if {$barrier eq "sender"} {
        incr done($i)
        $sink($i) set bytes_ 0
        sru-complete
    }
}

proc sru-complete {} {
    global ns waiting rounds
    incr waiting -1
    if {$waiting == 0} {
        incr rounds
        # Next round at the same simulated instant, once this packet is processed.
        $ns at [$ns now] start-round
    }
}

proc start-round {} {
    global ns tcp nservers sru_pkts waiting evfd
    set waiting $nservers
    puts $evfd "S [$ns now]"
    for {set i 0} {$i < $nservers} {incr i} {
        $tcp($i) advanceby $sru_pkts
    }
}

proc finish {} {
    global ns nservers tcp sink app done rcvd got need rounds qmon evfd et barrier
    global sru_bytes sru_ipbytes payload ippkt workload
    set delivered 0
    set nrexmit 0
    for {set i 0} {$i < $nservers} {incr i} {
        if {$workload eq "long"} {
            # No rounds: what the client has cumulatively acked, in data packets
            # (highest_ack_, bound as ack_; sequence number 0 is the 40-byte SYN).
            set delivered [expr {$delivered + wide([$tcp($i) set ack_]) * $payload}]
            set nrexmit [expr {$nrexmit + [$tcp($i) set nrexmit_]}]
            continue
        }
        # Completed SRUs count 256000 bytes each; in-order packets of the SRU
        # under way count 1460 each (integer division drops round 1's SYN).
        if {$barrier eq "receiver"} {
            set a $app($i)
            set srus $rcvd($a)
            set partbytes [expr {max(0, $got($a) - ($need($a) - $sru_ipbytes))}]
        } else {
            set srus $done($i)
            set partbytes [$sink($i) set bytes_]
        }
        # At most 256000: the sender barrier may find a whole SRU delivered
        # whose last ACK is still on its way.
        set part [expr {min($sru_bytes, $partbytes / $ippkt * $payload)}]
        set delivered [expr {$delivered + $srus * $sru_bytes + $part}]
        set nrexmit [expr {$nrexmit + [$tcp($i) set nrexmit_]}]
    }
    $et detach
    close $evfd
    puts "R ns2_version [ns-version]"
    puts "R delivered_bytes $delivered"
    puts "R rounds $rounds"
    puts "R nrexmit $nrexmit"
    puts "R drops [$qmon set pdrops_]"
    puts "R bottleneck_pkts [$qmon set pdepartures_]"
    puts "R sim_seconds [$ns now]"
    exit 0
}

if {$workload eq "long"} {
    for {set i 0} {$i < $nservers} {incr i} {
        set ftp($i) [new Application/FTP]
        $ftp($i) attach-agent $tcp($i)
        $ns at 0.0 "$ftp($i) start"
    }
} else {
    $ns at 0.0 start-round
}
$ns at $duration finish
$ns run
