//! Magic Tech tables over real sockets: the core's random legal mover
//! ([`MagicTech::legal_moves`]) picks each move from a client's mirror, and the move goes to the
//! server as its `magic_tech.*` request, as a bot would send it.

use grand_melee_protocol::game::Game;
use grand_melee_protocol::magic_tech::MagicTech;
use grand_melee_protocol::magic_tech_types::{MagicTechCommand as C, Target};
use grand_melee_protocol::rules::Command;
use grand_melee_protocol::shell::Stage;
use grand_melee_protocol::{
    ClientMessage, ErrorCode, Event, Mirror, PlayerId, ServerMessage, StageName, TableId, TableView,
};

use crate::Client;

/// The request that asks for `command`, numbered `id`; `None` for a command no request carries
/// (the lobby's `join`, a host's ruling, …: the random mover never picks them).
pub fn request(command: &Command, id: u32) -> Option<ClientMessage> {
    use ClientMessage as M;
    Some(match command.clone() {
        Command::Keep => M::Keep { id },
        Command::Mulligan => M::Mulligan { id },
        Command::EndTurn => M::EndTurn { id },
        Command::Concede => M::Concede { id },
        Command::MagicTech(command) => match command {
            C::DeclareDeck { size } => M::MagicTechDeclareDeck { id, size },
            C::NextPhase => M::MagicTechNextPhase { id },
            C::Deploy { land } => M::MagicTechDeploy { id, land },
            C::Tap { card, mana } => M::MagicTechTap { id, card, mana },
            C::Pay { card, amount } => M::MagicTechPay { id, card, amount },
            C::Reveal { card, face } => M::MagicTechReveal { id, card, face },
            C::Relocate { card, area } => M::MagicTechRelocate { id, card, area },
            C::Mission { attackers, target } => M::MagicTechMission {
                id,
                attackers,
                target,
            },
            C::Block { blocks } => M::MagicTechBlock { id, blocks },
            C::Damage { target, amount } => M::MagicTechDamage { id, target, amount },
            C::Heal { card, amount } => M::MagicTechHeal { id, card, amount },
            C::Regenerate { card } => M::MagicTechRegenerate { id, card },
            C::Draw { count } => M::MagicTechDraw { id, count },
            C::Life { delta } => M::MagicTechLife { id, delta },
            C::LeavePlay { card, to } => M::MagicTechLeavePlay { id, card, to },
            C::Propose { correction } => M::MagicTechPropose { id, correction },
            C::Answer { accept } => M::MagicTechAnswer { id, accept },
            C::Rule { correction } => M::MagicTechRule { id, correction },
        },
        _ => return None,
    })
}

/// A small deterministic random source (SplitMix64), so a failing game can be replayed from its
/// seed.
#[derive(Debug, Clone)]
pub struct Dice(u64);

impl Dice {
    /// The source for `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next number.
    pub fn roll(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        usize::try_from(self.roll() % u64::try_from(n).unwrap_or(u64::MAX)).unwrap_or(0)
    }

    /// True one time in `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
}

/// The Magic Tech table a snapshot shows.
pub fn table_of(view: &TableView) -> MagicTech {
    Mirror::<MagicTech>::of(view)
        .expect("a Magic Tech snapshot")
        .table()
        .clone()
}

/// Who moves next in a random game: the defender while a mission waits for his blocks, now and
/// then the player who answers an open proposal, the decider in the mulligans, else the active
/// player.
pub fn mover(game: &MagicTech, dice: &mut Dice) -> Option<PlayerId> {
    let board = game.board();
    if let Some(mission) = &board.mission {
        return game.opponent(mission.player);
    }
    if let Some(proposal) = &board.proposal
        && dice.one_in(2)
    {
        return game.opponent(proposal.player);
    }
    match game.stage() {
        Stage::Mulligan { .. } => game.deciders().first().copied(),
        Stage::Playing => board.active,
        _ => None,
    }
}

/// A random legal move of `player`'s. Card effects that empty a stockpile (draws, damage to it,
/// paid life) are picked rarely, so that boards get built and fight before the game ends.
pub fn pick(game: &MagicTech, player: PlayerId, dice: &mut Dice) -> Option<Command> {
    let moves = game.legal_moves(player);
    let quick = |c: &&Command| {
        matches!(
            c,
            Command::MagicTech(
                C::Draw { .. }
                    | C::Life { delta: ..0 }
                    | C::Damage {
                        target: Target::Stockpile { .. },
                        ..
                    }
            )
        )
    };
    let slow: Vec<&Command> = moves.iter().filter(|c| !quick(c)).collect();
    if moves.is_empty() {
        None
    } else if slow.is_empty() || dice.one_in(30) {
        Some(moves[dice.below(moves.len())].clone())
    } else {
        Some(slow[dice.below(slow.len())].clone())
    }
}

/// Every client catches up with event `seq`, and with the newest event any of them has seen.
pub async fn catch_up_all_to(clients: &mut [Client], seq: u64) {
    let seq = clients
        .iter()
        .filter_map(|c| c.view.as_ref().map(|v| v.seq))
        .fold(seq, u64::max);
    for client in clients.iter_mut() {
        client.catch_up(seq).await;
    }
}

/// Every client catches up with the newest event any of them has seen.
pub async fn catch_up_all(clients: &mut [Client]) {
    catch_up_all_to(clients, 0).await;
}

/// Sends `command` from `player`'s client and waits for its answer.
pub async fn send(
    clients: &mut [Client],
    player: PlayerId,
    command: &Command,
) -> Result<ServerMessage, ErrorCode> {
    let client = clients
        .iter_mut()
        .find(|c| c.seat.map(|(p, _)| p) == Some(player))
        .expect("the player's client");
    let message = request(command, 0).expect("a command a request carries");
    client
        .call(|id| {
            let mut message = message;
            *message.id_mut() = id;
            message
        })
        .await
}

/// Plays up to `moves` random legal moves (every client caught up before each), or until the
/// game is over; every move must be accepted. Returns how many were made.
pub async fn play(clients: &mut [Client], dice: &mut Dice, moves: usize) -> usize {
    let mut upto = 0;
    for made in 0..moves {
        // Up to the last move's events: the next one is chosen from the table it left.
        catch_up_all_to(clients, upto).await;
        let view = clients[0].view.clone().expect("a view");
        if view.stage == StageName::Finished {
            return made;
        }
        let game = table_of(&view);
        let player = mover(&game, dice).expect("someone is to move");
        let command = pick(&game, player, dice).expect("a legal move");
        match send(clients, player, &command).await {
            Ok(ServerMessage::Ack { seq, .. }) => upto = seq,
            answer => panic!("move {made}, {command:?} by {player}: {answer:?}"),
        }
    }
    catch_up_all_to(clients, upto).await;
    moves
}

/// Two players seated at a new Magic Tech table (client 0 is its host), their decks declared
/// (`decks`), the game started with Ann (client 0) first and in its mulligans. With the first
/// player chosen, the game is the same every time the same moves are sent.
pub async fn started(addr: std::net::SocketAddr, decks: [u8; 2]) -> (TableId, Vec<Client>) {
    let mut host = Client::connected(addr).await;
    let table = host.create(settings()).await.unwrap();
    let mut clients = vec![host, Client::connected(addr).await];
    for (client, name) in clients.iter_mut().zip(["Ann", "Bob"]) {
        client.join(table, name).await.unwrap();
    }
    start(&mut clients, decks).await;
    (table, clients)
}

/// A two-seat Magic Tech table's settings (no mulligan clock).
pub fn settings() -> crate::CreateTable {
    crate::CreateTable::new("tech", 2)
        .game(grand_melee_protocol::GameKind::MagicTech)
        .mulligan_clock_secs(0)
}

/// Both seated players declare their decks (`decks`), and the host (client 0) starts the game
/// with himself first.
pub async fn start(clients: &mut [Client], decks: [u8; 2]) {
    for (client, size) in clients.iter_mut().zip(decks) {
        let declared = client
            .call(|id| ClientMessage::MagicTechDeclareDeck { id, size })
            .await;
        assert!(
            matches!(declared, Ok(ServerMessage::Ack { .. })),
            "{declared:?}"
        );
    }
    catch_up_all(clients).await;
    let first = clients[0].seat.map(|(player, _)| player);
    let started = clients[0]
        .call(|id| ClientMessage::Start {
            id,
            first_player: first,
            seating: grand_melee_protocol::SeatingMode::Random,
            order: Vec::new(),
        })
        .await;
    assert!(
        matches!(started, Ok(ServerMessage::Ack { .. })),
        "{started:?}"
    );
    catch_up_all(clients).await;
}

/// The view a table's events fold to, from the empty table the server opens with `view`'s
/// settings.
pub fn fold(view: &TableView, events: &[Event]) -> TableView {
    use grand_melee_protocol::dice::DiceSecret;
    let empty = MagicTech::create(&view.settings, DiceSecret::from_seed(0))
        .expect("the table's settings")
        .view(view.table, &view.name, 0, &view.settings);
    let mut mirror = Mirror::<MagicTech>::of(&empty).expect("an empty Magic Tech table");
    mirror.apply_batch(1, events).expect("the journal folds");
    mirror.view()
}
