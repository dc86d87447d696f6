package dev.crossbar.bench.soak;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A data topic's messages: JSON texts of about {@value #SIZE} bytes, like a lab's sensor readings,
 * carrying their {@link Label}; the padding is a function of the label, so a receiver checks each whole.
 */
final class DataTexts {

    static final int SIZE = 200;
    private static final Pattern FORM = Pattern.compile("\\{\"topic\":(\\d+),\"conn\":(\\d+),\"n\":(\\d+),\"pad\":\"[a-z]*\"}");

    private DataTexts() {
    }

    static String text(Label l) {
        String head = "{\"topic\":" + l.stream() + ",\"conn\":" + l.epoch() + ",\"n\":" + l.seq() + ",\"pad\":\"";
        StringBuilder b = new StringBuilder(SIZE).append(head);
        long x = l.seq() * 0x9E3779B97F4A7C15L + l.stream();
        while (b.length() < SIZE - 2) {
            b.append((char) ('a' + Math.floorMod(x, 26)));
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        return b.append("\"}").toString();
    }

    /** The label of {@code s}, or null if it is not one of these texts whole. */
    static Label read(String s) {
        Matcher m = FORM.matcher(s);
        if (!m.matches()) {
            return null;
        }
        Label l = new Label(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), Long.parseLong(m.group(3)));
        return text(l).equals(s) ? l : null;
    }
}
